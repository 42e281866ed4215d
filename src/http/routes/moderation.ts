// Moderation (v1.2): a participant reports a message (user routes); the host app's backend works the report
// queue, bans users from the service and reads the audit log (server routes, X-Chat-Server-Key).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { listAudit } from '../../chat/audit.js';
import { REPORT_NOTE_MAX_CHARS, listReports, reportMessage, resolve } from '../../chat/reports.js';
import { HistoryItem, UserResource } from '../../contract/resources.js';
import { banUser, unbanUser } from '../../chat/user-bans.js';
import { AUDIT_ACTIONS } from '../../store/audit.js';
import { REPORT_ACTIONS, REPORT_REASONS, REPORT_STATUSES } from '../../store/schema.js';
import type { HttpDeps } from '../deps.js';
import { BAN_REASON_MAX_CHARS } from './groups.js';
import { Data, ErrorBody, Id, IdParams, Limit, Paged, userErrors } from '../schemas.js';

const tags = ['moderation'];
const serverErrors = { 401: ErrorBody, 404: ErrorBody, 409: ErrorBody, 422: ErrorBody, 429: ErrorBody };
const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
/** One of a list of strings (an enum in the OpenAPI document). */
const oneOf = <const T extends readonly string[]>(values: T) => Type.Unsafe<T[number]>({ type: 'string', enum: [...values] });
const Reason = oneOf(REPORT_REASONS);
const Cursor = Type.Optional(Type.String({ maxLength: 20 }));

const NewReport = Type.Object({ id: Id, message_id: Id, reason: Reason, status: oneOf(REPORT_STATUSES) });
const Report = Type.Object({
  ...NewReport.properties,
  note: Nullable(Type.String()),
  action: Nullable(oneOf(REPORT_ACTIONS)),
  created_at: Timestamp,
  resolved_at: Nullable(Timestamp),
  reporter: UserResource,
  message: Nullable(HistoryItem),
});
const UserBan = Type.Object({ user_id: Id, reason: Nullable(Type.String()), until: Nullable(Timestamp) });
const AuditEntry = Type.Object({
  id: Id,
  at: Timestamp,
  actor_id: Nullable(Id),
  action: oneOf(AUDIT_ACTIONS),
  conversation_id: Nullable(Id),
  target_user_id: Nullable(Id),
  message_id: Nullable(Id),
  details: Type.Record(Type.String(), Type.Unknown()),
});

/** Reporting a message (a participant). */
export const reportRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat }) => {
  app.post('/messages/:id/report', {
    schema: {
      tags, summary: 'Report a message (a participant; once per message)',
      params: IdParams,
      body: Type.Object({ reason: Reason, note: Type.Optional(Nullable(Type.String({ maxLength: REPORT_NOTE_MAX_CHARS }))) }),
      response: { 201: Data(NewReport), ...userErrors, 409: ErrorBody },
    },
  }, async (request, reply) => reply.status(201).send({ data: await reportMessage(chat, request.actor, request.params.id, request.body) }));
};

/** The report queue, service-wide bans and the audit log (the server key). */
export const moderationRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat }) => {
  app.get('/moderation/reports', {
    schema: {
      tags, summary: 'Reports, newest first (open by default)',
      querystring: Type.Object({ status: Type.Optional(oneOf(REPORT_STATUSES)), cursor: Cursor, limit: Limit(50) }),
      response: { 200: Paged(Report), ...serverErrors },
    },
  }, async (request) => {
    const { status = 'open', cursor, limit } = request.query;
    const page = await listReports(chat, { status, cursor, limit });
    return { data: page.data, meta: { next_cursor: page.next_cursor } };
  });

  app.post('/moderation/reports/:id/resolve', {
    schema: {
      tags, summary: "Resolve a report: dismiss it, delete the message for everyone, or ban the message's sender from the service",
      params: IdParams,
      body: Type.Object({ action: oneOf(REPORT_ACTIONS) }),
      response: { 200: Data(Report), ...serverErrors },
    },
  }, async (request) => ({ data: await resolve(chat, request.params.id, request.body.action) }));

  app.put('/users/:id/ban', {
    schema: {
      tags, summary: 'Ban a user from the service: tokens refused, sockets closed, nobody may message them',
      params: IdParams,
      body: Type.Union([
        Type.Object({
          reason: Type.Optional(Nullable(Type.String({ maxLength: BAN_REASON_MAX_CHARS }))),
          until: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'When the ban ends; absent or null: until unbanned' }))),
        }),
        Type.Null(),
      ]),
      response: { 200: Data(UserBan), ...serverErrors },
    },
  }, async (request) => ({ data: await banUser(chat, request.params.id, request.body ?? {}) }));

  app.delete('/users/:id/ban', {
    schema: { tags, summary: 'Lift a ban from the service', params: IdParams, response: { 204: Type.Null(), ...serverErrors } },
  }, async (request, reply) => {
    await unbanUser(chat, request.params.id);
    return reply.status(204).send(null);
  });

  app.get('/audit', {
    schema: {
      tags, summary: 'The audit log, newest first',
      querystring: Type.Object({ cursor: Cursor, limit: Limit(50), actor_id: Type.Optional(Id), conversation_id: Type.Optional(Id) }),
      response: { 200: Paged(AuditEntry), ...serverErrors },
    },
  }, async (request) => {
    const page = await listAudit(chat, request.query);
    return { data: page.data, meta: { next_cursor: page.next_cursor } };
  });
};
