// The only reader of process.env: environment → typed, frozen configuration.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const BROADCAST_DRIVERS = ['builtin', 'pusher', 'log'] as const;
export type BroadcastDriver = (typeof BROADCAST_DRIVERS)[number];

/**
 * BROADCAST_CHAT_CHANNELS: whose chat channels (private-chat.*) the built-in server carries. `own`: this
 * Parley's, so a conversation channel needs a fresh authorization from this Parley's auth endpoint (access can
 * be revoked). `relay`: another Parley's (BROADCAST_DRIVER=pusher pointed here), which authorizes them; a valid
 * signature is enough, as on any Pusher server.
 */
export const CHAT_CHANNEL_MODES = ['own', 'relay'] as const;
export type ChatChannelMode = (typeof CHAT_CHANNEL_MODES)[number];

/** BROADCAST_DRIVER=pusher: the external Pusher-compatible server (Laravel's PUSHER_* names). */
export interface PusherConfig {
  readonly appId: string;
  readonly key: string;
  readonly secret: string;
  /** PUSHER_HOST, or hosted Pusher's api-{cluster}.pusher.com when unset. */
  readonly host: string;
  readonly port: number;
  readonly scheme: 'http' | 'https';
  readonly cluster: string;
  /** Largest `data` of one event; larger events are not sent (logged and counted). */
  readonly maxEventBytes: number;
  /** Where browsers connect (GET /client-config): hosted Pusher's ws-{cluster}.pusher.com, or PUSHER_CLIENT_* / PUSHER_*. */
  readonly client: { readonly host: string; readonly port: number; readonly tls: boolean };
}

export interface Limits {
  readonly bodyMaxChars: number;
  readonly attachmentMaxBytes: number;
  readonly groupMaxParticipants: number;
  /** Requests per user per minute, by action. */
  readonly sendsPerMinute: number;
  readonly typingPerMinute: number;
  readonly heartbeatsPerMinute: number;
  readonly channelAuthsPerMinute: number;
}

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** PostgreSQL URL; null means the embedded PGlite database in dataDir. */
  readonly databaseUrl: string | null;
  /** DATABASE_PREPARED_STATEMENTS (PostgreSQL): parameterized queries as named prepared statements. Default on. */
  readonly databasePreparedStatements: boolean;
  /** DATABASE_SEND_LANES (PostgreSQL): batches of sends written at once (group commit; default 1); the embedded default has one. */
  readonly databaseSendLanes: number;
  readonly redisUrl: string | null;
  /** Prefix of every Redis key and pub/sub topic: nodes of one deployment share it. */
  readonly redisPrefix: string;
  readonly jwtSecret: string;
  readonly serverKey: string;
  readonly broadcast: {
    readonly driver: BroadcastDriver;
    readonly appId: string;
    readonly appKey: string;
    readonly appSecret: string;
    readonly activityTimeoutSeconds: number;
    /** Largest WebSocket frame a client may send; a bigger one closes the socket with 1009. */
    readonly maxMessageBytes: number;
    /** Largest `data` of one event, from the HTTP API (413 above it) or a client event (4301). */
    readonly maxEventBytes: number;
    /** Largest HTTP API request body (/apps/{id}/events, batch_events): 413 above it. */
    readonly maxApiBodyBytes: number;
    /** Open sockets per node; more are refused with 4100 (pusher-js backs off and retries). */
    readonly maxConnections: number;
    readonly maxChannelsPerConnection: number;
    /** Members of one presence channel; more are refused with subscription_error 403. */
    readonly maxPresenceMembers: number;
    /** Bytes waiting in one socket's send buffer before it is closed with 4100 (a client that stopped reading). */
    readonly maxBufferedBytes: number;
    /** client-* events on private and presence channels (Echo's whisper). */
    readonly clientEvents: boolean;
    readonly clientEventsPerSecond: number;
    /** Origins allowed to open a socket (exact match, or "*" for any). Empty: any. */
    readonly allowedOrigins: readonly string[];
    /** Whose private-chat.* channels the built-in server carries (BROADCAST_CHAT_CHANNELS). */
    readonly chatChannels: ChatChannelMode;
  };
  /** Set when BROADCAST_DRIVER=pusher, else null. */
  readonly pusher: PusherConfig | null;
  readonly presenceTimeoutMs: number;
  readonly presenceSweepMs: number;
  readonly typingTimeoutMs: number;
  readonly corsOrigins: readonly string[];
  readonly limits: Limits;
  readonly logLevel: string;
  /** CHAT_DEMO=1: the web client offers a sign-in by user id and name (POST /demo/token). Never for production. */
  readonly demo: boolean;
  /** True when some secret was generated for the embedded default (the service says how to get a token). */
  readonly generatedSecrets: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {}

function int(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

/** A limit or interval where 0 would make no sense (or stop the server later with a less clear error). */
function positiveInt(env: Env, name: string, fallback: number): number {
  const value = int(env, name, fallback);
  if (value === 0) throw new ConfigError(`${name} must be at least 1`);
  return value;
}

function str(env: Env, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw === '' ? null : raw;
}

/** On/off: 1, true, on, yes or 0, false, off, no (any case); unset or empty is the fallback. */
function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = str(env, name);
  if (raw === null) return fallback;
  const value = raw.trim().toLowerCase();
  if (['1', 'true', 'on', 'yes'].includes(value)) return true;
  if (['0', 'false', 'off', 'no'].includes(value)) return false;
  throw new ConfigError(`${name} must be on or off (1/true/on or 0/false/off), got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = str(env, name) ?? fallback;
  if (!(values as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

function port(env: Env, name: string, fallback: number): number {
  const value = int(env, name, fallback);
  if (value < 1 || value > 65535) throw new ConfigError(`${name} must be a port (1-65535), got "${env[name]}"`);
  return value;
}

/** The external server of BROADCAST_DRIVER=pusher. Defaults as Laravel's config/broadcasting.php: hosted Pusher over https. */
function pusherConfig(env: Env): PusherConfig {
  const required = ['PUSHER_APP_ID', 'PUSHER_APP_KEY', 'PUSHER_APP_SECRET'] as const;
  const missing = required.filter((name) => str(env, name) === null);
  if (missing.length > 0) throw new ConfigError(`BROADCAST_DRIVER=pusher needs ${required.join(', ')} (missing: ${missing.join(', ')})`);
  const cluster = str(env, 'PUSHER_APP_CLUSTER') ?? 'mt1';
  const givenHost = str(env, 'PUSHER_HOST');
  const scheme = oneOf(env, 'PUSHER_SCHEME', ['https', 'http'] as const, 'https');
  const apiPort = port(env, 'PUSHER_PORT', scheme === 'https' ? 443 : 80);
  let client: PusherConfig['client'];
  if (givenHost === null) {
    client = { host: `ws-${cluster}.pusher.com`, port: 443, tls: true };
  } else {
    // Browsers may reach the server at another address than Parley does (a public name, a proxy's port).
    const clientHost = str(env, 'PUSHER_CLIENT_HOST');
    const clientScheme = oneOf(env, 'PUSHER_CLIENT_SCHEME', ['https', 'http'] as const, scheme);
    const sameAddress = clientHost === null && str(env, 'PUSHER_CLIENT_SCHEME') === null;
    const clientPort = port(env, 'PUSHER_CLIENT_PORT', sameAddress ? apiPort : clientScheme === 'https' ? 443 : 80);
    client = { host: clientHost ?? givenHost, port: clientPort, tls: clientScheme === 'https' };
  }
  return Object.freeze({
    appId: str(env, 'PUSHER_APP_ID')!,
    key: str(env, 'PUSHER_APP_KEY')!,
    secret: str(env, 'PUSHER_APP_SECRET')!,
    host: givenHost ?? `api-${cluster}.pusher.com`,
    port: apiPort,
    scheme,
    cluster,
    maxEventBytes: positiveInt(env, 'PUSHER_MAX_EVENT_BYTES', 10_240),
    client: Object.freeze(client),
  });
}

/** A comma-separated list; empty or unset is []. */
function list(env: Env, name: string): string[] {
  return (str(env, name) ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

interface DevSecrets {
  jwtSecret: string;
  serverKey: string;
  appId: string;
  appKey: string;
  appSecret: string;
}

/** Secrets for the embedded default: generated once, kept in the data directory so tokens survive restarts. */
function devSecrets(dataDir: string): { secrets: DevSecrets; created: boolean } {
  const file = join(dataDir, 'secrets.json');
  if (existsSync(file)) return { secrets: JSON.parse(readFileSync(file, 'utf8')) as DevSecrets, created: false };
  const secrets: DevSecrets = {
    jwtSecret: randomBytes(32).toString('hex'),
    serverKey: randomBytes(24).toString('hex'),
    appId: String(100000 + (randomBytes(3).readUIntBE(0, 3) % 900000)),
    appKey: randomBytes(10).toString('hex'),
    appSecret: randomBytes(20).toString('hex'),
  };
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, JSON.stringify(secrets, null, 2) + '\n', { mode: 0o600 });
  return { secrets, created: true };
}

export function loadConfig(env: Env = process.env): Config {
  const dataDir = resolve(str(env, 'CHAT_DATA_DIR') ?? './data');
  const driver = str(env, 'BROADCAST_DRIVER') ?? 'builtin';
  if (!(BROADCAST_DRIVERS as readonly string[]).includes(driver)) {
    throw new ConfigError(`BROADCAST_DRIVER must be one of ${BROADCAST_DRIVERS.join(', ')}, got "${driver}"`);
  }
  const chatChannels = oneOf(env, 'BROADCAST_CHAT_CHANNELS', CHAT_CHANNEL_MODES, 'own');
  if (chatChannels === 'relay' && driver !== 'builtin') {
    throw new ConfigError('BROADCAST_CHAT_CHANNELS=relay is for the Parley whose built-in server carries another Parley’s events (BROADCAST_DRIVER=builtin)');
  }
  const given = {
    jwtSecret: str(env, 'CHAT_JWT_SECRET'),
    serverKey: str(env, 'CHAT_SERVER_KEY'),
    appId: str(env, 'BROADCAST_APP_ID'),
    appKey: str(env, 'BROADCAST_APP_KEY'),
    appSecret: str(env, 'BROADCAST_APP_SECRET'),
  };
  const missing = Object.values(given).some((v) => v === null);
  const dev = missing ? devSecrets(dataDir) : null;
  const pick = (key: keyof DevSecrets): string => given[key] ?? dev!.secrets[key];

  return Object.freeze({
    port: int(env, 'PORT', 8080),
    host: str(env, 'HOST') ?? '0.0.0.0',
    dataDir,
    databaseUrl: str(env, 'DATABASE_URL'),
    databasePreparedStatements: bool(env, 'DATABASE_PREPARED_STATEMENTS', true),
    databaseSendLanes: positiveInt(env, 'DATABASE_SEND_LANES', 1),
    redisUrl: str(env, 'REDIS_URL'),
    redisPrefix: str(env, 'REDIS_PREFIX') ?? 'parley:',
    jwtSecret: pick('jwtSecret'),
    serverKey: pick('serverKey'),
    broadcast: Object.freeze({
      driver: driver as BroadcastDriver,
      appId: pick('appId'),
      appKey: pick('appKey'),
      appSecret: pick('appSecret'),
      activityTimeoutSeconds: positiveInt(env, 'BROADCAST_ACTIVITY_TIMEOUT', 30),
      maxMessageBytes: positiveInt(env, 'BROADCAST_MAX_MESSAGE_BYTES', 20_000),
      maxEventBytes: positiveInt(env, 'BROADCAST_MAX_EVENT_BYTES', 10_240),
      maxApiBodyBytes: positiveInt(env, 'BROADCAST_MAX_API_BODY_BYTES', 256 * 1024),
      maxConnections: positiveInt(env, 'BROADCAST_MAX_CONNECTIONS', 50_000),
      maxChannelsPerConnection: positiveInt(env, 'BROADCAST_MAX_CHANNELS_PER_CONNECTION', 1000),
      maxPresenceMembers: positiveInt(env, 'BROADCAST_MAX_PRESENCE_MEMBERS', 100),
      maxBufferedBytes: positiveInt(env, 'BROADCAST_MAX_BUFFERED_BYTES', 1024 * 1024),
      clientEvents: (str(env, 'BROADCAST_CLIENT_EVENTS') ?? '1') !== '0',
      clientEventsPerSecond: positiveInt(env, 'BROADCAST_CLIENT_EVENTS_PER_SECOND', 10),
      allowedOrigins: list(env, 'BROADCAST_ALLOWED_ORIGINS'),
      chatChannels,
    }),
    pusher: driver === 'pusher' ? pusherConfig(env) : null,
    presenceTimeoutMs: int(env, 'CHAT_PRESENCE_TIMEOUT_MS', 70_000),
    presenceSweepMs: int(env, 'CHAT_PRESENCE_SWEEP_MS', 5_000),
    typingTimeoutMs: int(env, 'CHAT_TYPING_TIMEOUT_MS', 8_000),
    corsOrigins: list(env, 'CHAT_CORS_ORIGINS'),
    limits: Object.freeze({
      bodyMaxChars: int(env, 'CHAT_BODY_MAX_CHARS', 10_000),
      attachmentMaxBytes: int(env, 'CHAT_ATTACHMENT_MAX_BYTES', 25 * 1024 * 1024),
      groupMaxParticipants: int(env, 'CHAT_GROUP_MAX_PARTICIPANTS', 10_000),
      sendsPerMinute: int(env, 'CHAT_RATE_SENDS_PER_MINUTE', 600),
      typingPerMinute: int(env, 'CHAT_RATE_TYPING_PER_MINUTE', 120),
      heartbeatsPerMinute: int(env, 'CHAT_RATE_HEARTBEATS_PER_MINUTE', 30),
      channelAuthsPerMinute: int(env, 'CHAT_RATE_CHANNEL_AUTHS_PER_MINUTE', 300),
    }),
    logLevel: str(env, 'LOG_LEVEL') ?? 'info',
    demo: str(env, 'CHAT_DEMO') === '1',
    generatedSecrets: dev?.created ?? false,
  });
}
