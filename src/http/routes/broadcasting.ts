import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { isParticipant } from '../../chat/access.js';
import { ChatError } from '../../contract/api-errors.js';
import { parseChatChannel } from '../../contract/channels.js';
import { isValidSocketId } from '../../realtime/index.js';
import type { HttpDeps } from '../deps.js';
import { userErrors } from '../schemas.js';

const refuse = (message: string) => new ChatError('forbidden', message);

export const broadcastingRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat, channels }) => {
  app.post('/broadcasting/auth', {
    schema: {
      tags: ['broadcasting'],
      summary: 'Authorize a private channel subscription (pusher-js posts it as a form)',
      consumes: ['application/x-www-form-urlencoded', 'application/json'],
      body: Type.Object({ socket_id: Type.String({ maxLength: 64 }), channel_name: Type.String({ maxLength: 200 }) }),
      response: { 200: Type.Object({ auth: Type.String() }), ...userErrors },
    },
  }, async (request) => {
    const { socket_id: socketId, channel_name: channelName } = request.body;
    await chat.rateLimiter.consume('channel_auth', request.actor.userId);
    if (!isValidSocketId(socketId)) throw refuse('The socket_id is not valid.');
    const channel = parseChatChannel(channelName);
    if (!channel) throw refuse('This channel cannot be subscribed to.');
    if (channel.kind === 'user' && channel.id !== request.actor.userId) throw refuse('This is another user’s channel.');
    // Only "not a participant" refuses: a database that does not answer is a 503 to retry (the error passes on),
    // since pusher-js gives up on a channel whose authorization was refused.
    if (channel.kind === 'conversation' && !(await isParticipant(chat.db, channel.id, request.actor.userId))) {
      throw refuse('You are not a participant of this conversation.');
    }
    return { auth: await channels.authorize(socketId, channelName, request.actor) };
  });

  // pusher-js's userAuthentication endpoint (pusher:signin): the socket is then this user's, so the host app can
  // send to the user (`sendToUser`) and end the user's connections (`terminate_connections`) through the Pusher HTTP API.
  app.post('/broadcasting/user-auth', {
    schema: {
      tags: ['broadcasting'],
      summary: 'Sign in a socket as the current user (pusher:signin; pusher-js posts it as a form)',
      consumes: ['application/x-www-form-urlencoded', 'application/json'],
      body: Type.Object({ socket_id: Type.String({ maxLength: 64 }) }),
      response: { 200: Type.Object({ auth: Type.String(), user_data: Type.String() }), ...userErrors },
    },
  }, async (request) => {
    await chat.rateLimiter.consume('channel_auth', request.actor.userId);
    if (!isValidSocketId(request.body.socket_id)) throw refuse('The socket_id is not valid.');
    return channels.authenticateUser(request.body.socket_id, request.actor);
  });
};
