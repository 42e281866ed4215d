import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { invalid } from '../../contract/api-errors.js';
import { SubscriptionInvalid, subscribePush, unsubscribePush } from '../../delivery/web-push/subscriptions.js';
import type { HttpDeps } from '../deps.js';
import { Data, userErrors } from '../schemas.js';

const tags = ['push'];
const Endpoint = Type.String({ minLength: 1, maxLength: 2048, description: 'The push service URL of the browser (PushSubscription.endpoint).' });
const NoContent = { 204: Type.Null(), ...userErrors };

export const pushRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat, push }) => {
  if (!push) return;

  app.get('/push/config', {
    schema: {
      tags, summary: 'The VAPID public key to subscribe a browser with (applicationServerKey)',
      response: { 200: Data(Type.Object({ vapid_public_key: Type.String() })), ...userErrors },
    },
  }, async () => ({ data: { vapid_public_key: push.vapidPublicKey } }));

  app.post('/push/subscriptions', {
    schema: {
      tags, summary: 'Save a browser\'s push subscription for the caller (the same endpoint again replaces it)',
      body: Type.Object({
        endpoint: Endpoint,
        keys: Type.Object({
          p256dh: Type.String({ minLength: 1, maxLength: 200, description: 'base64url, 65 bytes' }),
          auth: Type.String({ minLength: 1, maxLength: 100, description: 'base64url, 16 bytes' }),
        }),
        expirationTime: Type.Optional(Type.Union([Type.Null(), Type.Number()])),
      }),
      response: { 201: Data(Type.Object({ endpoint: Type.String() })), ...userErrors },
    },
  }, async (request, reply) => {
    try {
      return reply.status(201).send({ data: await subscribePush(chat.db, push, request.actor.userId, request.body) });
    } catch (err) {
      if (err instanceof SubscriptionInvalid) throw invalid(err.field, err.message);
      throw err;
    }
  });

  app.delete('/push/subscriptions', {
    schema: { tags, summary: 'Remove one of the caller\'s push subscriptions (204 also when there was none)', body: Type.Object({ endpoint: Endpoint }), response: NoContent },
  }, async (request, reply) => {
    await unsubscribePush(chat.db, request.actor.userId, request.body.endpoint);
    return reply.status(204).send(null);
  });
};
