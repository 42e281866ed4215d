// The configuration wing, the only reader of process.env: environment → typed, frozen Config, or a ConfigError.
// settings.ts is the table of settings (names, types, defaults, meanings; the README's table comes from it);
// dev-secrets.ts reads or generates the embedded default's development secrets beforehand (main.ts does both);
// pusher-apps.ts and blocked-words.ts read BROADCAST_APPS_FILE's and CHAT_BLOCKED_WORDS's files. Each component
// builds its own settings from this Config; src/app/ composes them.
import { resolve } from 'node:path';
import { DEV_SECRET_NAMES, type DevSecrets } from './dev-secrets.js';
import { loadBlockedWords } from './blocked-words.js';
import { loadPusherApps, type PusherAppConfig } from './pusher-apps.js';
import { redisDeployment, type RedisDeployment } from './redis.js';
import type { S3StorageOptions } from '../store/attachment-storage.js';
import { BROADCAST_DRIVERS, CHAT_CHANNEL_MODES, ConfigError, readSettings, type SettingValues } from './settings.js';

export { BROADCAST_DRIVERS, CHAT_CHANNEL_MODES, ConfigError };
export type { HostPort, RedisDeployment } from './redis.js';
export type BroadcastDriver = (typeof BROADCAST_DRIVERS)[number];

/**
 * BROADCAST_CHAT_CHANNELS: whose chat channels (private-chat.*) the built-in server carries. `own`: this
 * Parley's, so a conversation channel needs a fresh authorization from this Parley's auth endpoint (access can
 * be revoked). `relay`: another Parley's (BROADCAST_DRIVER=pusher pointed here), which authorizes them; a valid
 * signature is enough, as on any Pusher server.
 */
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
  /** CHAT_UPLOAD_QUOTA_BYTES: the bytes of one user's attachments together. */
  readonly uploadQuotaBytes: number;
  readonly groupMaxParticipants: number;
  /** CHAT_SYNC_RETENTION_S: how long GET /sync can catch up from a cursor (and the feed keeps its changes). */
  readonly syncRetentionSeconds: number;
  /** CHAT_MESSAGE_RETENTION_DAYS: messages older than this many days are deleted; null: kept forever. */
  readonly messageRetentionDays: number | null;
  /** CHAT_BLOCKED_WORDS's words and phrases (given, or read from its `@/path` file); empty: none (chat/blocked-words.ts). */
  readonly blockedWords: readonly string[];
  /** Requests per user per minute, by action (CHAT_RATE_*; 0: off). */
  readonly sendsPerMinute: number;
  readonly typingPerMinute: number;
  readonly heartbeatsPerMinute: number;
  readonly channelAuthsPerMinute: number;
  readonly editsPerMinute: number;
  readonly readsPerMinute: number;
  readonly conversationChangesPerMinute: number;
  /** Groups one user may create in any hour (on top of conversationChangesPerMinute). */
  readonly groupsPerHour: number;
  readonly uploadsPerMinute: number;
  readonly blocksPerMinute: number;
  readonly otherWritesPerMinute: number;
  /** Reads that cost: searches (messages, users) and history pages. */
  readonly searchesPerMinute: number;
  readonly historyPagesPerMinute: number;
  /** Failed authentications per address per minute. */
  readonly authFailuresPerMinute: number;
  /** CHAT_REQUEST_TIMEOUT_S: time for a request's headers, and for its body before it earns more (http/timeouts.ts). */
  readonly requestTimeoutSeconds: number;
  /** CHAT_REQUEST_MIN_BYTES_PER_S: each this many bytes of a body received give it one more second. */
  readonly requestMinBytesPerSecond: number;
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
  /** DATABASE_REPLICA_URLS (PostgreSQL): streaming replicas for the reads that tolerate lag (store/read-replicas.ts); [] for none. */
  readonly databaseReplicaUrls: readonly string[];
  /** DATABASE_REPLICA_MAX_LAG_MS: a replica further behind is skipped; a user's reads go to the primary this long after their write. */
  readonly databaseReplicaMaxLagMs: number;
  readonly redisUrl: string | null;
  /** The deployment's Redis, whichever of REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS says where (at most one); null: none. */
  readonly redis: RedisDeployment | null;
  /** Prefix of every Redis key and pub/sub topic: nodes of one deployment share it. */
  readonly redisPrefix: string;
  readonly jwtSecret: string;
  /** What user tokens must say besides their signature (CHAT_JWT_*); the tokens Parley issues follow it too. */
  readonly jwt: JwtPolicy;
  readonly serverKey: string;
  /** METRICS_TOKEN: the bearer token for /metrics from other hosts; null: loopback only. */
  readonly metricsToken: string | null;
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
    /** Open sockets per node from one client address (an IPv6 /64); more are refused with 4100. */
    readonly maxConnectionsPerAddress: number;
    readonly maxChannelsPerConnection: number;
    /** Frames one socket may send per second on average, and at once. */
    readonly maxFramesPerSecond: number;
    readonly maxFrameBurst: number;
    /** Members of one presence channel; more are refused with subscription_error 403. */
    readonly maxPresenceMembers: number;
    /** Bytes waiting in one socket's send buffer before it is closed with 4100 (a client that stopped reading). */
    readonly maxBufferedBytes: number;
    /** client-* events on private and presence channels (Echo's whisper). */
    readonly clientEvents: boolean;
    readonly clientEventsPerSecond: number;
    /** Origins allowed to open a socket (exact match, or "*" for any). Empty: any. */
    readonly allowedOrigins: readonly string[];
    /** BROADCAST_WEBHOOK_URLS: where the Pusher webhooks go; empty: none. */
    readonly webhookUrls: readonly string[];
    /** Whose private-chat.* channels the built-in server carries (BROADCAST_CHAT_CHANNELS). */
    readonly chatChannels: ChatChannelMode;
    /** BROADCAST_APPS_FILE: further apps beside the default one; empty: none. */
    readonly apps: readonly PusherAppConfig[];
  };
  /** Set when BROADCAST_DRIVER=pusher, else null. */
  readonly pusher: PusherConfig | null;
  readonly presenceTimeoutMs: number;
  readonly presenceSweepMs: number;
  readonly typingTimeoutMs: number;
  readonly corsOrigins: readonly string[];
  /** CHAT_TRUSTED_PROXIES: proxies whose X-Forwarded-For names the client (Fastify's trustProxy); empty: none. */
  readonly trustedProxies: readonly string[];
  readonly limits: Limits;
  /** Where attachment files live (CHAT_STORAGE, S3_*), and how long an upload never sent is kept. */
  readonly storage: StorageConfig;
  readonly logLevel: string;
  /** CHAT_DEMO on: the web client offers a sign-in by user id and name (POST /demo/token). Never for production. */
  readonly demo: boolean;
  /** Web Push (CHAT_VAPID_*, CHAT_PUSH_ALLOW_HTTP); keys null when unset (delivery/web-push/vapid.ts generates them). */
  readonly push: PushConfig;
  readonly webhooks: WebhookConfig;
  /** True when some secret came from CHAT_DATA_DIR/secrets.json (development secrets): the banner then prints a token. */
  readonly devSecrets: boolean;
}

/** Webhooks to the host app (CHAT_WEBHOOK_*; src/delivery/host-webhooks.ts). */
export interface WebhookConfig {
  readonly urls: readonly string[];
  /** CHAT_WEBHOOK_SECRET; null: generated into CHAT_DATA_DIR/webhook-secret. */
  readonly secret: string | null;
}

export interface PushConfig {
  readonly vapidPublicKey: string | null;
  readonly vapidPrivateKey: string | null;
  readonly vapidSubject: string;
  /** CHAT_PUSH_ALLOW_HTTP: http endpoints and loopback addresses accepted (development and tests). */
  readonly allowHttp: boolean;
}

export type StorageConfig =
  | { readonly driver: 'local'; readonly unsentUploadTtlSeconds: number }
  | { readonly driver: 's3'; readonly unsentUploadTtlSeconds: number; readonly s3: S3StorageOptions };

export interface JwtPolicy {
  /** CHAT_JWT_ISSUER: the `iss` a token must have; null: not checked. */
  readonly issuer: string | null;
  /** CHAT_JWT_AUDIENCE: the `aud` a token must have (or include); null: not checked. */
  readonly audience: string | null;
  /** CHAT_JWT_MAX_TTL_S: the longest lifetime of a token (exp - iat, and exp - now), in seconds. */
  readonly maxTtlSeconds: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The external server of BROADCAST_DRIVER=pusher. Defaults as Laravel's config/broadcasting.php: hosted Pusher over https. */
function pusherConfig(v: SettingValues): PusherConfig {
  const required = ['PUSHER_APP_ID', 'PUSHER_APP_KEY', 'PUSHER_APP_SECRET'] as const;
  const missing = required.filter((name) => v[name] === null);
  if (missing.length > 0) {
    throw new ConfigError(`BROADCAST_DRIVER=pusher needs ${required.join(', ')} (missing: ${missing.join(', ')}). Fix: set them to the external server's app credentials.`);
  }
  const cluster = v.PUSHER_APP_CLUSTER;
  const givenHost = v.PUSHER_HOST;
  const scheme = v.PUSHER_SCHEME;
  const apiPort = v.PUSHER_PORT ?? (scheme === 'https' ? 443 : 80);
  let client: PusherConfig['client'];
  if (givenHost === null) {
    client = { host: `ws-${cluster}.pusher.com`, port: 443, tls: true };
  } else {
    // Browsers may reach the server at another address than Parley does (a public name, a proxy's port).
    const clientScheme = v.PUSHER_CLIENT_SCHEME ?? scheme;
    const sameAddress = v.PUSHER_CLIENT_HOST === null && v.PUSHER_CLIENT_SCHEME === null;
    const clientPort = v.PUSHER_CLIENT_PORT ?? (sameAddress ? apiPort : clientScheme === 'https' ? 443 : 80);
    client = { host: v.PUSHER_CLIENT_HOST ?? givenHost, port: clientPort, tls: clientScheme === 'https' };
  }
  return Object.freeze({
    appId: v.PUSHER_APP_ID!,
    key: v.PUSHER_APP_KEY!,
    secret: v.PUSHER_APP_SECRET!,
    host: givenHost ?? `api-${cluster}.pusher.com`,
    port: apiPort,
    scheme,
    cluster,
    maxEventBytes: v.PUSHER_MAX_EVENT_BYTES,
    client: Object.freeze(client),
  });
}

/**
 * env → configuration. `dev`: the development secrets (config/dev-secrets.ts) that fill in the secrets env
 * leaves unset; without them every secret must be set. Throws a ConfigError naming the setting and the fix.
 */
export function loadConfig(env: Env = process.env, dev?: DevSecrets | null): Config {
  const merged: Record<string, string | undefined> = { ...env };
  let fromDev = false;
  for (const [key, name] of Object.entries(DEV_SECRET_NAMES) as [keyof DevSecrets, string][]) {
    if ((merged[name] ?? '') !== '' || !dev) continue;
    merged[name] = dev[key];
    fromDev = true;
  }
  const v = readSettings(merged);
  const unset = Object.values(DEV_SECRET_NAMES).filter((name) => v[name as keyof SettingValues] === null);
  if (unset.length > 0) {
    throw new ConfigError(`${unset.join(', ')} not set. Fix: set all five secrets, or none for development secrets in CHAT_DATA_DIR/secrets.json.`);
  }
  if (v.BROADCAST_CHAT_CHANNELS === 'relay' && v.BROADCAST_DRIVER !== 'builtin') {
    throw new ConfigError('BROADCAST_CHAT_CHANNELS=relay is for the Parley whose built-in server carries another Parley’s events. Fix: use it with BROADCAST_DRIVER=builtin, or unset it.');
  }
  if ((v.CHAT_VAPID_PUBLIC_KEY === null) !== (v.CHAT_VAPID_PRIVATE_KEY === null)) {
    throw new ConfigError('CHAT_VAPID_PUBLIC_KEY and CHAT_VAPID_PRIVATE_KEY go together. Fix: set both (npx web-push generate-vapid-keys), or neither for a pair generated into CHAT_DATA_DIR/vapid.json.');
  }

  if (v.DATABASE_REPLICA_URLS.length > 0 && v.DATABASE_URL === null) {
    throw new ConfigError('DATABASE_REPLICA_URLS needs DATABASE_URL: the embedded database has no replicas. Fix: set DATABASE_URL to the PostgreSQL primary the replicas follow, or unset DATABASE_REPLICA_URLS.');
  }
  const redis = redisDeployment(v);
  if (v.BROADCAST_APPS_FILE && v.BROADCAST_DRIVER !== 'builtin') {
    throw new ConfigError(`BROADCAST_APPS_FILE needs the built-in server (BROADCAST_DRIVER=builtin, not ${v.BROADCAST_DRIVER}). Fix: unset one of them.`);
  }

  return Object.freeze({
    port: v.PORT,
    host: v.HOST,
    dataDir: resolve(v.CHAT_DATA_DIR),
    databaseUrl: v.DATABASE_URL,
    databasePreparedStatements: v.DATABASE_PREPARED_STATEMENTS,
    databaseSendLanes: v.DATABASE_SEND_LANES,
    databaseReplicaUrls: v.DATABASE_REPLICA_URLS,
    databaseReplicaMaxLagMs: v.DATABASE_REPLICA_MAX_LAG_MS,
    redisUrl: v.REDIS_URL,
    redis,
    redisPrefix: v.REDIS_PREFIX,
    jwtSecret: v.CHAT_JWT_SECRET!,
    jwt: Object.freeze({ issuer: v.CHAT_JWT_ISSUER, audience: v.CHAT_JWT_AUDIENCE, maxTtlSeconds: v.CHAT_JWT_MAX_TTL_S }),
    serverKey: v.CHAT_SERVER_KEY!,
    metricsToken: v.METRICS_TOKEN,
    broadcast: Object.freeze({
      driver: v.BROADCAST_DRIVER,
      appId: v.BROADCAST_APP_ID!,
      appKey: v.BROADCAST_APP_KEY!,
      appSecret: v.BROADCAST_APP_SECRET!,
      activityTimeoutSeconds: v.BROADCAST_ACTIVITY_TIMEOUT,
      maxMessageBytes: v.BROADCAST_MAX_MESSAGE_BYTES,
      maxEventBytes: v.BROADCAST_MAX_EVENT_BYTES,
      maxApiBodyBytes: v.BROADCAST_MAX_API_BODY_BYTES,
      maxConnections: v.BROADCAST_MAX_CONNECTIONS,
      maxConnectionsPerAddress: v.BROADCAST_MAX_CONNECTIONS_PER_ADDRESS,
      maxChannelsPerConnection: v.BROADCAST_MAX_CHANNELS_PER_CONNECTION,
      maxFramesPerSecond: v.BROADCAST_MAX_FRAMES_PER_SECOND,
      maxFrameBurst: v.BROADCAST_MAX_FRAME_BURST,
      maxPresenceMembers: v.BROADCAST_MAX_PRESENCE_MEMBERS,
      maxBufferedBytes: v.BROADCAST_MAX_BUFFERED_BYTES,
      clientEvents: v.BROADCAST_CLIENT_EVENTS,
      clientEventsPerSecond: v.BROADCAST_CLIENT_EVENTS_PER_SECOND,
      allowedOrigins: v.BROADCAST_ALLOWED_ORIGINS,
      webhookUrls: v.BROADCAST_WEBHOOK_URLS,
      chatChannels: v.BROADCAST_CHAT_CHANNELS,
      apps: v.BROADCAST_APPS_FILE
        ? loadPusherApps(v.BROADCAST_APPS_FILE, {
            id: v.BROADCAST_APP_ID!,
            key: v.BROADCAST_APP_KEY!,
            clientEvents: v.BROADCAST_CLIENT_EVENTS,
            maxConnections: v.BROADCAST_MAX_CONNECTIONS,
          })
        : [],
    }),
    pusher: v.BROADCAST_DRIVER === 'pusher' ? pusherConfig(v) : null,
    storage: storageConfig(v),
    presenceTimeoutMs: v.CHAT_PRESENCE_TIMEOUT_MS,
    presenceSweepMs: v.CHAT_PRESENCE_SWEEP_MS,
    typingTimeoutMs: v.CHAT_TYPING_TIMEOUT_MS,
    corsOrigins: v.CHAT_CORS_ORIGINS,
    trustedProxies: v.CHAT_TRUSTED_PROXIES,
    limits: Object.freeze({
      bodyMaxChars: v.CHAT_BODY_MAX_CHARS,
      attachmentMaxBytes: v.CHAT_ATTACHMENT_MAX_BYTES,
      uploadQuotaBytes: v.CHAT_UPLOAD_QUOTA_BYTES,
      groupMaxParticipants: v.CHAT_GROUP_MAX_PARTICIPANTS,
      syncRetentionSeconds: v.CHAT_SYNC_RETENTION_S,
      messageRetentionDays: v.CHAT_MESSAGE_RETENTION_DAYS,
      blockedWords: loadBlockedWords(v.CHAT_BLOCKED_WORDS),
      sendsPerMinute: v.CHAT_RATE_SENDS_PER_MINUTE,
      typingPerMinute: v.CHAT_RATE_TYPING_PER_MINUTE,
      heartbeatsPerMinute: v.CHAT_RATE_HEARTBEATS_PER_MINUTE,
      channelAuthsPerMinute: v.CHAT_RATE_CHANNEL_AUTHS_PER_MINUTE,
      editsPerMinute: v.CHAT_RATE_EDITS_PER_MINUTE,
      readsPerMinute: v.CHAT_RATE_READS_PER_MINUTE,
      conversationChangesPerMinute: v.CHAT_RATE_CONVERSATIONS_PER_MINUTE,
      groupsPerHour: v.CHAT_RATE_GROUPS_PER_HOUR,
      uploadsPerMinute: v.CHAT_RATE_UPLOADS_PER_MINUTE,
      blocksPerMinute: v.CHAT_RATE_BLOCKS_PER_MINUTE,
      otherWritesPerMinute: v.CHAT_RATE_OTHER_WRITES_PER_MINUTE,
      searchesPerMinute: v.CHAT_RATE_SEARCHES_PER_MINUTE,
      historyPagesPerMinute: v.CHAT_RATE_HISTORY_PAGES_PER_MINUTE,
      authFailuresPerMinute: v.CHAT_RATE_AUTH_FAILURES_PER_MINUTE,
      requestTimeoutSeconds: v.CHAT_REQUEST_TIMEOUT_S,
      requestMinBytesPerSecond: v.CHAT_REQUEST_MIN_BYTES_PER_S,
    }),
    logLevel: v.LOG_LEVEL,
    demo: v.CHAT_DEMO,
    push: Object.freeze({
      vapidPublicKey: v.CHAT_VAPID_PUBLIC_KEY,
      vapidPrivateKey: v.CHAT_VAPID_PRIVATE_KEY,
      vapidSubject: v.CHAT_VAPID_SUBJECT,
      allowHttp: v.CHAT_PUSH_ALLOW_HTTP,
    }),
    webhooks: Object.freeze({ urls: v.CHAT_WEBHOOK_URLS, secret: v.CHAT_WEBHOOK_SECRET }),
    devSecrets: fromDev,
  });
}

function storageConfig(v: SettingValues): StorageConfig {
  const unsentUploadTtlSeconds = v.CHAT_UNSENT_UPLOAD_TTL_S;
  if (v.CHAT_STORAGE === 'local') return Object.freeze({ driver: 'local', unsentUploadTtlSeconds });
  if (v.S3_BUCKET === null || v.S3_BUCKET.trim() === '') {
    throw new ConfigError('CHAT_STORAGE=s3 needs S3_BUCKET. Fix: set S3_BUCKET (and S3_ENDPOINT for a store other than AWS S3), or unset CHAT_STORAGE.');
  }
  if ((v.S3_ACCESS_KEY_ID === null) !== (v.S3_SECRET_ACCESS_KEY === null)) {
    throw new ConfigError('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together. Fix: set both, or neither for the AWS SDK\'s own credentials (instance role, AWS_* variables).');
  }
  const credentials = v.S3_ACCESS_KEY_ID !== null && v.S3_SECRET_ACCESS_KEY !== null
    ? Object.freeze({ accessKeyId: v.S3_ACCESS_KEY_ID, secretAccessKey: v.S3_SECRET_ACCESS_KEY })
    : null;
  return Object.freeze({
    driver: 's3',
    unsentUploadTtlSeconds,
    s3: Object.freeze({ bucket: v.S3_BUCKET.trim(), endpoint: v.S3_ENDPOINT, region: v.S3_REGION, credentials, forcePathStyle: v.S3_FORCE_PATH_STYLE }),
  });
}
