// The only reader of process.env: environment → typed, frozen configuration.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const BROADCAST_DRIVERS = ['builtin', 'log'] as const;
export type BroadcastDriver = (typeof BROADCAST_DRIVERS)[number];

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
  };
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
    }),
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
