// The Pusher HTTP API of the built-in server, the protocol's other half (as Reverb keeps both in
// src/Protocols/Pusher/), registered as a Fastify plugin at the server root as on Pusher: the official server SDKs
// (`pusher` for Node, pusher-http-php for Laravel, ...) pointed at Parley trigger events, read channel occupancy
// and end users' connections. A request reaches only the app its path names (the default app or one of
// BROADCAST_APPS_FILE) and is signed with that app's key and secret (api-signature.ts); the body is verified as
// the raw bytes received, so these routes parse JSON themselves. Status codes are Pusher's: 400 bad request,
// 401 bad signature, 404 unknown app, 413 too large; the server's error handler renders each as Parley's
// {message, code}.
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { OccupancyReport, PusherApiBackend } from '../api-backend.js';
import { verifyApiRequest } from './api-signature.js';
import { channelTypeOf, isValidChannelName } from './channel-types.js';
import { isValidSocketId } from './signature.js';
import { SERVER_TO_USER_PREFIX } from './signin.js';

/** One app of the API: its id in the path, the credentials that sign its requests, and its channels. */
export interface PusherApiApp {
  readonly id: string;
  readonly key: string;
  readonly secret: string;
  readonly backend: PusherApiBackend;
}

export interface PusherApiOptions {
  /** Every app served (BROADCAST_APP_* and BROADCAST_APPS_FILE); a request reaches only the app its path names. */
  readonly apps: readonly PusherApiApp[];
  /** Largest `data` of one event in bytes (413 above it). */
  readonly maxEventBytes: number;
  /** Largest request body in bytes (413 above it). */
  readonly maxBodyBytes: number;
}

/** Pusher's limits on one request. */
export const PUSHER_API_LIMITS = { channelsPerEvent: 100, eventsPerBatch: 10, eventNameChars: 200, userIdChars: 128 } as const;

const RESERVED_EVENT_PREFIXES = ['pusher:', 'pusher_internal:'];
const INFO_ATTRIBUTES = ['subscription_count', 'user_count'] as const;
type InfoAttribute = (typeof INFO_ATTRIBUTES)[number];

interface ApiEvent {
  readonly name: string;
  readonly data: string;
  readonly channels: readonly string[];
  readonly socketId: string | undefined;
  readonly info: ReadonlySet<InfoAttribute>;
}

interface ChannelAttributes {
  subscription_count?: number;
  user_count?: number;
}

/** A refusal with its HTTP status, which the server's error handler renders as {message, code}. */
class PusherApiError extends Error {
  constructor(
    readonly statusCode: 400 | 401 | 404 | 413,
    message: string,
  ) {
    super(message);
  }
}

const badRequest = (message: string) => new PusherApiError(400, message);

export const pusherHttpApi: FastifyPluginAsync<PusherApiOptions> = async (app, options) => {
  const apps = new Map(options.apps.map((a) => [a.id, a]));
  /** The app the path names; onRequest has answered 404 for any other. */
  const appOf = (request: FastifyRequest): PusherApiApp => apps.get((request.params as { appId: string }).appId)!;

  // Only here: the body stays the bytes received, whatever the content type (the signature covers them).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: options.maxBodyBytes }, (_request, body, done) => done(null, body));

  app.addHook('onRequest', async (request) => {
    if (!apps.has((request.params as { appId?: string }).appId ?? '')) throw new PusherApiError(404, 'No app with this id.');
  });
  app.addHook('preHandler', async (request) => {
    const verified = verifyApiRequest({ method: request.method, url: request.url, body: rawBody(request) }, appOf(request));
    if (!verified.ok) throw new PusherApiError(401, verified.reason);
  });

  const route = { schema: { hide: true } };

  app.post('/apps/:appId/events', route, async (request) => {
    const { backend } = appOf(request);
    const event = parseEvent(jsonBody(request), 'channels', options.maxEventBytes);
    const [report] = await Promise.all([
      event.info.size > 0 ? occupancyOf(backend, event.channels) : undefined,
      backend.publish(event.channels, event.name, event.data, event.socketId),
    ]);
    if (report === undefined) return {};
    return { channels: Object.fromEntries(event.channels.map((channel) => [channel, attributes(report, channel, event.info)])) };
  });

  app.post('/apps/:appId/batch_events', route, async (request) => {
    const { backend } = appOf(request);
    const body = jsonBody(request);
    const batch = (body as { batch?: unknown }).batch;
    if (!Array.isArray(batch) || batch.length === 0 || batch.length > PUSHER_API_LIMITS.eventsPerBatch) {
      throw badRequest(`batch must be an array of 1 to ${PUSHER_API_LIMITS.eventsPerBatch} events.`);
    }
    // All or nothing: every event is checked before any is sent.
    const events = batch.map((item, i) => parseEvent(item, 'channel', options.maxEventBytes, `batch[${i}].`));
    const wanted = [...new Set(events.filter((e) => e.info.size > 0).flatMap((e) => e.channels))];
    const [report] = await Promise.all([
      wanted.length > 0 ? occupancyOf(backend, wanted) : undefined,
      ...events.map((e) => backend.publish(e.channels, e.name, e.data, e.socketId)),
    ]);
    // Pusher's reference: an empty hash, unless some event asked for info (then one entry per event, in order).
    if (report === undefined) return {};
    return { batch: events.map((e) => (e.info.size > 0 ? attributes(report, e.channels[0]!, e.info) : {})) };
  });

  app.get('/apps/:appId/channels', route, async (request) => {
    const { backend } = appOf(request);
    const query = request.query as Record<string, string | undefined>;
    const prefix = query.filter_by_prefix ?? '';
    const info = infoAttributes(query.info);
    if (info.has('user_count') && !prefix.startsWith('presence-')) {
      throw badRequest('info=user_count needs filter_by_prefix=presence- (user counts exist for presence channels only).');
    }
    const report = await backend.occupancy({ prefix });
    return { channels: Object.fromEntries([...report.keys()].map((channel) => [channel, attributes(report, channel, info)])) };
  });

  app.get('/apps/:appId/channels/:channelName', route, async (request) => {
    const { backend } = appOf(request);
    const channel = channelParam(request);
    const info = infoAttributes((request.query as { info?: string }).info);
    if (info.has('user_count') && channelTypeOf(channel) !== 'presence') throw badRequest('user_count is only available for presence channels.');
    const report = await backend.occupancy({ channel });
    return { occupied: report.has(channel), ...attributes(report, channel, info) };
  });

  app.get('/apps/:appId/channels/:channelName/users', route, async (request) => {
    const { backend } = appOf(request);
    const channel = channelParam(request);
    if (channelTypeOf(channel) !== 'presence') throw badRequest('Users can only be listed for presence channels.');
    const report = await backend.occupancy({ channel });
    return { users: (report.get(channel)?.userIds ?? []).map((id) => ({ id })) };
  });

  app.post('/apps/:appId/users/:userId/terminate_connections', route, async (request) => {
    const { backend } = appOf(request);
    const { userId } = request.params as { userId: string };
    if (userId === '' || userId.length > PUSHER_API_LIMITS.userIdChars) throw badRequest('The user id is not valid.');
    await backend.terminateUserConnections(userId);
    return {};
  });
};

function rawBody(request: FastifyRequest): Buffer | undefined {
  return Buffer.isBuffer(request.body) ? request.body : undefined;
}

function jsonBody(request: FastifyRequest): Record<string, unknown> {
  const raw = rawBody(request);
  if (raw === undefined || raw.length === 0) throw badRequest('The request needs a JSON body.');
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw badRequest('The body is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('The body must be a JSON object.');
  return value as Record<string, unknown>;
}

/**
 * One event of /events (`channels` or `channel`) or of a batch (`channel`). `#server-to-user-{id}` is the
 * channel of a signed-in user (what the SDKs' sendToUser triggers to); it may be sent to, not subscribed to.
 */
function parseEvent(value: unknown, form: 'channels' | 'channel', maxEventBytes: number, at = ''): ApiEvent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`${at || 'The event'} must be a JSON object.`);
  const { name, data, channels, channel, socket_id: socketId, info } = value as Record<string, unknown>;

  if (typeof name !== 'string' || name === '' || name.length > PUSHER_API_LIMITS.eventNameChars) {
    throw badRequest(`${at}name must be a string of 1 to ${PUSHER_API_LIMITS.eventNameChars} characters.`);
  }
  if (RESERVED_EVENT_PREFIXES.some((prefix) => name.startsWith(prefix))) throw badRequest(`${at}name may not start with pusher: or pusher_internal:.`);
  if (typeof data !== 'string') throw badRequest(`${at}data must be a string (JSON-encode objects).`);
  if (Buffer.byteLength(data, 'utf8') > maxEventBytes) throw new PusherApiError(413, `${at}data is larger than ${maxEventBytes} bytes.`);

  let names: string[];
  if (form === 'channels' && channels !== undefined) {
    if (channel !== undefined) throw badRequest('Give channels or channel, not both.');
    if (!Array.isArray(channels) || channels.length === 0 || channels.length > PUSHER_API_LIMITS.channelsPerEvent) {
      throw badRequest(`channels must be an array of 1 to ${PUSHER_API_LIMITS.channelsPerEvent} channel names.`);
    }
    names = channels as string[];
  } else {
    if (channel === undefined) throw badRequest(form === 'channels' ? 'channels or channel is required.' : `${at}channel is required.`);
    names = [channel as string];
  }
  for (const c of names) {
    if (typeof c !== 'string' || !(isValidChannelName(c) || isUserChannel(c))) throw badRequest(`${at}"${String(c).slice(0, 200)}" is not a valid channel name.`);
  }
  names = [...new Set(names)];
  if (names.length > 1 && names.some((c) => channelTypeOf(c) === 'private-encrypted')) {
    throw badRequest('An event to a private-encrypted- channel must go to that channel alone.');
  }
  if (socketId !== undefined && (typeof socketId !== 'string' || !isValidSocketId(socketId))) throw badRequest(`${at}socket_id is not a valid socket id.`);
  if (info !== undefined && typeof info !== 'string') throw badRequest(`${at}info must be a comma-separated string.`);
  return { name, data, channels: names, socketId, info: infoAttributes(info) };
}

function isUserChannel(channel: string): boolean {
  const userId = channel.slice(SERVER_TO_USER_PREFIX.length);
  return channel.startsWith(SERVER_TO_USER_PREFIX) && userId !== '' && userId.length <= PUSHER_API_LIMITS.userIdChars;
}

/** The attributes asked for in `info` ("subscription_count,user_count"); unknown ones are ignored. */
function infoAttributes(info: string | undefined): Set<InfoAttribute> {
  const asked = (info ?? '').split(',').map((s) => s.trim());
  return new Set(INFO_ATTRIBUTES.filter((attribute) => asked.includes(attribute)));
}

/** A channel's attributes as the API reports them; user_count only for presence channels. */
function attributes(report: OccupancyReport, channel: string, info: ReadonlySet<InfoAttribute>): ChannelAttributes {
  const occupancy = report.get(channel);
  const out: ChannelAttributes = {};
  if (info.has('subscription_count')) out.subscription_count = occupancy?.subscriptionCount ?? 0;
  if (info.has('user_count') && channelTypeOf(channel) === 'presence') out.user_count = occupancy?.userIds?.length ?? 0;
  return out;
}

/** Occupancy of a few named channels (an event's), queried together. */
async function occupancyOf(backend: PusherApiBackend, channels: readonly string[]): Promise<OccupancyReport> {
  const reports = await Promise.all(channels.map((channel) => backend.occupancy({ channel })));
  return new Map(reports.flatMap((report) => [...report]));
}

function channelParam(request: FastifyRequest): string {
  const { channelName } = request.params as { channelName: string };
  if (!isValidChannelName(channelName)) throw badRequest('The channel name is not valid.');
  return channelName;
}
