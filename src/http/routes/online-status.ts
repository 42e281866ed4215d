// The chat's online status over HTTP (POST /presence/heartbeat, /presence/offline; the paths keep their names):
// not Pusher presence channels, which the built-in server keeps (src/realtime/presence/).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { invalid } from '../../contract/api-errors.js';
import { PresenceResource } from '../../contract/resources.js';
import type { HttpDeps } from '../deps.js';
import { userErrors } from '../schemas.js';

const tags = ['presence'];
const Online = (value: boolean) => Type.Object({ data: Type.Object({ is_online: Type.Literal(value) }) });

export const onlineStatusRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat, presence }) => {
  // A page closing sends what it can (keepalive fetch, often text/plain or empty): the body is not needed.
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, _body, done) => done(null, undefined));

  app.post('/presence/heartbeat', {
    schema: { tags, summary: 'The caller is online (send every 30 s; offline 70 s after the last one)', response: { 200: Online(true), ...userErrors } },
  }, async (request) => ({ data: await presence.heartbeat(chat, request.actor) }));

  app.post('/presence/offline', {
    schema: { tags, summary: 'The caller went away (works with fetch keepalive)', response: { 200: Online(false), ...userErrors } },
  }, async (request) => ({ data: await presence.offline(chat, request.actor) }));

  app.get('/presence', {
    schema: {
      tags, summary: 'Presence of users who share a conversation with the caller',
      querystring: Type.Object({ user_ids: Type.String({ pattern: '^\\d+(,\\d+)*$', maxLength: 2000 }) }),
      response: { 200: Type.Object({ data: Type.Array(PresenceResource) }), ...userErrors },
    },
  }, async (request) => {
    const ids = request.query.user_ids.split(',').map(Number);
    if (ids.length > 100) throw invalid('user_ids', 'Ask for at most 100 users at once.');
    return { data: await presence.get(chat, request.actor, ids) };
  });
};
