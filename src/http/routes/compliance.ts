// Compliance routes for the host application's backend (X-Chat-Server-Key): a user's export and erasure.
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requestErasure } from '../../chat/erasure.js';
import { lagTolerant } from '../../chat/context.js';
import { exportUser } from '../../chat/export.js';
import { HistoryItem, UserResource } from '../../contract/resources.js';
import type { HttpDeps } from '../deps.js';
import { ErrorBody, Id, IdParams } from '../schemas.js';

const tags = ['server'];
const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

/** The export's document, for the OpenAPI document (it is streamed as it is read, never serialized at once). */
const ExportDocument = Type.Object({
  user: UserResource,
  conversations: Type.Array(Type.Object({ id: Id, type: Type.String(), name: Nullable(Type.String()), role: Type.String(), joined_at: Timestamp })),
  messages: Type.Array(HistoryItem, { description: 'Every message the user sent that is not deleted (thread replies included), oldest first.' }),
  reactions: Type.Array(Type.Object({ message_id: Id, emoji: Type.String(), created_at: Timestamp })),
  reads: Type.Array(Type.Object({ conversation_id: Id, last_read_message_id: Type.Integer(), last_read_at: Nullable(Timestamp) })),
  blocks: Type.Array(Type.Object({ user_id: Id, created_at: Timestamp })),
  mutes: Type.Array(Type.Object({ conversation_id: Id, until: Nullable(Timestamp) })),
  pins: Type.Array(Type.Object({ conversation_id: Id, message_id: Type.Optional(Id), pinned_at: Timestamp }), {
    description: 'Conversations the user pinned in their inbox (no message_id), then messages they pinned.',
  }),
  push_subscriptions: Type.Array(Type.Object({ endpoint: Type.String(), created_at: Timestamp }), { description: 'Without their keys.' }),
});

/** Yields `first`, then the rest of `pieces`. */
async function* resume<T>(first: T, pieces: AsyncGenerator<T>): AsyncGenerator<T> {
  yield first;
  yield* pieces;
}

export const complianceRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat }) => {
  app.get('/users/:id/export', {
    schema: {
      tags, summary: "Export everything kept of a user (a JSON document, streamed as a download)", params: IdParams,
      response: { 200: { description: 'The export, as a download', content: { 'application/json': { schema: ExportDocument } } }, 401: ErrorBody, 404: ErrorBody, 429: ErrorBody },
    },
  }, async (request, reply) => {
    const id = request.params.id;
    // Read where the user's own reads would be: a replica, unless the user has just written (chat/context.ts).
    const pieces = exportUser((fn) => lagTolerant(chat, id, fn), id, chat.copyOut);
    // The first piece is read before anything is sent: an unknown user is a 404, not a broken download.
    const first = await pieces.next();
    // Pulled by the response as the client reads: a slow client slows the reading, memory stays flat.
    const body = Readable.from(first.done ? [] : resume(first.value, pieces), { objectMode: false });
    return reply
      .type('application/json; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="parley-user-${id}-export.json"`)
      .send(body as never); // a stream: sent as it is read, never serialized
  });

  app.delete('/users/:id', {
    schema: {
      tags,
      summary: 'Erase a user: at once "Deleted user", tokens refused, sockets closed; the rest in the background',
      description:
        'messages=erase (default): every message the user sent is deleted for everyone, body and attachment file included. ' +
        'messages=keep: their messages stay, under "Deleted user". Idempotent: asking again answers 202 and does nothing more.',
      params: IdParams,
      querystring: Type.Object({ messages: Type.Optional(Type.Union([Type.Literal('erase'), Type.Literal('keep')], { default: 'erase' })) }),
      response: { 202: Type.Object({ data: Type.Object({ user_id: Id, messages: Type.Union([Type.Literal('erase'), Type.Literal('keep')]) }) }), 401: ErrorBody, 404: ErrorBody, 422: ErrorBody, 429: ErrorBody },
    },
  }, async (request, reply) => {
    const mode = request.query.messages ?? 'erase';
    await requestErasure(chat, request.params.id, mode);
    return reply.status(202).send({ data: { user_id: request.params.id, messages: mode } });
  });
};
