import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { changeOwnState } from '../../chat/own-state.js';
import { ConversationView } from '../../contract/resources.js';
import { MAX_PINNED_CONVERSATIONS } from '../../store/own-state.js';
import type { HttpDeps } from '../deps.js';
import { Data, ErrorBody, IdParams, userErrors } from '../schemas.js';

const tags = ['conversations'];
const View = { 200: Data(ConversationView), ...userErrors };

/** The caller's own state of a conversation: mute (v1.1), archive, pin and clear (v1.2); each answers the conversation. */
export const ownStateRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat }) => {
  app.put('/conversations/:id/mute', {
    schema: {
      tags, summary: 'Mute the conversation (notifications only) until a time, or until unmuted (until: null)',
      params: IdParams,
      body: Type.Object({ until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]) }),
      response: View,
    },
  }, async (request) => {
    const until = request.body.until === null ? null : new Date(request.body.until);
    return { data: await changeOwnState(chat, request.actor, request.params.id, { kind: 'mute', until }) };
  });

  app.delete('/conversations/:id/mute', {
    schema: { tags, summary: 'Unmute the conversation', params: IdParams, response: View },
  }, async (request) => ({ data: await changeOwnState(chat, request.actor, request.params.id, { kind: 'unmute' }) }));

  app.put('/conversations/:id/archive', {
    schema: { tags, summary: 'Archive the conversation: out of the inbox, and it stays archived when messages arrive', params: IdParams, response: View },
  }, async (request) => ({ data: await changeOwnState(chat, request.actor, request.params.id, { kind: 'archive', on: true }) }));

  app.delete('/conversations/:id/archive', {
    schema: { tags, summary: 'Bring an archived conversation back to the inbox', params: IdParams, response: View },
  }, async (request) => ({ data: await changeOwnState(chat, request.actor, request.params.id, { kind: 'archive', on: false }) }));

  app.put('/conversations/:id/pin', {
    schema: {
      tags, summary: `Pin the conversation to the top of the inbox (at most ${MAX_PINNED_CONVERSATIONS})`,
      params: IdParams,
      response: { ...View, 409: ErrorBody },
    },
  }, async (request) => ({ data: await changeOwnState(chat, request.actor, request.params.id, { kind: 'pin', on: true }) }));

  app.delete('/conversations/:id/pin', {
    schema: { tags, summary: 'Unpin the conversation', params: IdParams, response: View },
  }, async (request) => ({ data: await changeOwnState(chat, request.actor, request.params.id, { kind: 'pin', on: false }) }));

  app.post('/conversations/:id/clear', {
    schema: { tags, summary: 'Clear the history up to now, for yourself only', params: IdParams, response: View },
  }, async (request) => ({ data: await changeOwnState(chat, request.actor, request.params.id, { kind: 'clear' }) }));
};
