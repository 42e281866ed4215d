// Every environment setting, one row each: name, type, default and meaning. Parsing (src/config/index.ts), the
// configuration errors, the README's configuration table (npm run docs:config) and the defaults of the
// real-time server (src/realtime/index.ts) all come from here; no default is written down anywhere else.
//
// The rule for numbers: sizes, counts and durations are at least 1. A `0` means "off" only for the rows that
// say so (the rate limits), and `PORT=0` means "any free port" (tests use it).

import { isIP } from 'node:net';

export class ConfigError extends Error {}

/** One setting. `parse` returns undefined when the text is not a valid value. */
export interface Setting<T> {
  /** What a valid value is, in words: the README's Type column, and "NAME must be <type>" in errors. */
  readonly type: string;
  /** The type in errors, when it needs more words than in the README's table. */
  readonly typeInErrors?: string;
  /** The value when the variable is unset or empty. */
  readonly default: T;
  /** The README's Default column when it is not simply the default value (e.g. "generated into secrets.json"). */
  readonly defaultText?: string;
  /** The README's Meaning column (Markdown). */
  readonly meaning: string;
  readonly parse: (raw: string) => T | undefined;
  /** What an error says was given (secrets and URLs with credentials are not repeated). Default: the text in quotes. */
  readonly given?: (raw: string) => string;
  /** How to fix a wrong value, when "set a valid value or unset it" is not the advice. */
  readonly fix?: string;
}

type Row<T> = Omit<Setting<T>, 'type' | 'parse'>;

const INTEGER = /^-?\d+$/;
const fmt = (n: number) => String(n);

/** An integer from min to max (inclusive). */
function integer(row: Row<number> & { min: number; max?: number; unit?: string }): Setting<number> {
  const { min, max = Number.MAX_SAFE_INTEGER, unit } = row;
  const range = max === Number.MAX_SAFE_INTEGER ? `an integer ≥ ${fmt(min)}` : `an integer from ${fmt(min)} to ${fmt(max)}`;
  return {
    ...row,
    type: unit ? `${range} (${unit})` : range,
    parse: (raw) => {
      if (!INTEGER.test(raw.trim())) return undefined;
      const value = Number(raw.trim());
      return Number.isSafeInteger(value) && value >= min && value <= max ? value : undefined;
    },
  };
}

/** Sizes, counts and durations: at least 1. */
const positive = (row: Row<number> & { unit?: string }) => integer({ ...row, min: 1 });

/** A per-minute rate limit: 0 turns it off. */
const ratePerMinute = (row: Row<number>) =>
  integer({ ...row, min: 0, unit: 'per minute; `0`: off', meaning: row.meaning });

/** A per-hour rate limit (for actions rare enough that a minute says little): 0 turns it off. */
const ratePerHour = (row: Row<number>) => integer({ ...row, min: 0, unit: 'per hour; `0`: off', meaning: row.meaning });

const portNumber = integer({ default: 1, meaning: '', min: 1, max: 65_535 });
const port = (row: Row<number | null>): Setting<number | null> => ({ ...row, type: 'a port (1 to 65535)', parse: portNumber.parse });

const ON = ['1', 'true', 'yes', 'on'];
const OFF = ['0', 'false', 'no', 'off'];

/** On or off: 1/true/yes/on and 0/false/no/off, in any case. */
function boolean(row: Row<boolean>): Setting<boolean> {
  return {
    ...row,
    type: 'on/off',
    typeInErrors: 'on/off (1/true/yes/on or 0/false/no/off)',
    parse: (raw) => {
      const value = raw.trim().toLowerCase();
      return ON.includes(value) ? true : OFF.includes(value) ? false : undefined;
    },
  };
}

function oneOf<const V extends string>(values: readonly V[], row: Row<V>): Setting<V>;
function oneOf<const V extends string>(values: readonly V[], row: Row<V | null>): Setting<V | null>;
function oneOf<const V extends string>(values: readonly V[], row: Row<V | null>): Setting<V | null> {
  return {
    ...row,
    type: `one of ${values.map((v) => `\`${v}\``).join(', ')}`,
    parse: (raw) => ((values as readonly string[]).includes(raw.trim()) ? (raw.trim() as V) : undefined),
  };
}

function text(row: Row<string>): Setting<string>;
function text(row: Row<string | null>): Setting<string | null>;
function text(row: Row<string | null>): Setting<string | null> {
  return { ...row, type: 'text', parse: (raw) => raw };
}

/** A comma-separated list; unset or empty is []. */
function list(row: Omit<Row<readonly string[]>, 'default'>): Setting<readonly string[]> {
  return {
    ...row,
    default: [],
    type: 'comma-separated list',
    parse: (raw) => Object.freeze(raw.split(',').map((s) => s.trim()).filter(Boolean)),
  };
}

/** IP addresses and CIDR ranges (10.0.0.0/8, fd00::/8), comma-separated; unset or empty is []. */
function addressList(row: Omit<Row<readonly string[]>, 'default'>): Setting<readonly string[]> {
  const valid = (entry: string) => {
    const [address = '', bits, ...rest] = entry.split('/');
    const version = isIP(address);
    if (version === 0 || rest.length > 0) return false;
    return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128));
  };
  const base = list(row);
  return {
    ...base,
    type: 'comma-separated IP addresses or CIDR ranges',
    parse: (raw) => {
      const entries = base.parse(raw);
      return entries?.every(valid) ? entries : undefined;
    },
  };
}

/** http(s) URLs, comma-separated; unset or empty is []. */
function urlList(row: Omit<Row<readonly string[]>, 'default'>): Setting<readonly string[]> {
  const valid = (entry: string) => {
    try {
      const url = new URL(entry);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  };
  const base = list(row);
  return {
    ...base,
    type: 'comma-separated http(s) URLs',
    parse: (raw) => {
      const entries = base.parse(raw);
      return entries?.every(valid) ? entries : undefined;
    },
  };
}

/** PostgreSQL URLs, comma-separated; unset or empty is []. An error names no URL (they may hold passwords). */
function postgresUrlList(row: Omit<Row<readonly string[]>, 'default'>): Setting<readonly string[]> {
  const valid = (entry: string) => {
    try {
      return ['postgres:', 'postgresql:'].includes(new URL(entry).protocol);
    } catch {
      return false;
    }
  };
  const base = list(row);
  return {
    ...base,
    type: 'comma-separated PostgreSQL URLs (`postgres://`)',
    given: (raw) => `${raw.split(',').filter((s) => s.trim()).length} entries, not all postgres:// URLs`,
    fix: 'write each as `postgres://user:password@host:5432/database`, separated by commas',
    parse: (raw) => {
      const entries = base.parse(raw);
      return entries?.every(valid) ? entries : undefined;
    },
  };
}

/** host:port addresses, comma-separated (Redis Cluster nodes, Redis Sentinels); unset or empty is []. */
function hostPortList(row: Omit<Row<readonly string[]>, 'default'>): Setting<readonly string[]> {
  const valid = (entry: string) => {
    const match = /^(.+):(\d{1,5})$/.exec(entry);
    return match !== null && Number(match[2]) >= 1 && Number(match[2]) <= 65_535 && !/[\s/@]/.test(match[1]!);
  };
  const base = list(row);
  return {
    ...base,
    type: 'comma-separated `host:port` addresses',
    fix: 'write each as `host:port`, e.g. `10.0.0.1:7000`, separated by commas',
    parse: (raw) => {
      const entries = base.parse(raw);
      return entries?.every(valid) ? entries : undefined;
    },
  };
}

/** Bytes a secret must have at least (HS256 wants a key as long as its hash, 32 bytes). */
export const SECRET_MIN_BYTES = 32;

const secret = (row: Row<string | null>): Setting<string | null> => ({
  ...row,
  type: `a secret of at least ${SECRET_MIN_BYTES} bytes`,
  given: (raw) => `${Buffer.byteLength(raw)} bytes`,
  fix: 'generate one with `openssl rand -hex 32`',
  parse: (raw) => (Buffer.byteLength(raw) >= SECRET_MIN_BYTES ? raw : undefined),
});

/** A URL with one of the given schemes (written "scheme://..."). */
function url(schemes: readonly string[], example: string, row: Row<string | null>): Setting<string | null> {
  return {
    ...row,
    type: `a URL (${schemes.map((s) => `\`${s}://\``).join(' or ')})`,
    given: (raw) => {
      const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(raw.trim())?.[1];
      return scheme ? `a ${scheme}: URL` : 'no URL';
    },
    fix: `write it as ${example}`,
    parse: (raw) => {
      try {
        return schemes.includes(new URL(raw.trim()).protocol.replace(/:$/, '')) ? raw.trim() : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

const GENERATED = 'generated into `secrets.json`';
const KIB = 1024;
const MIB = 1024 * KIB;

export const BROADCAST_DRIVERS = ['builtin', 'pusher', 'log'] as const;
export const CHAT_CHANNEL_MODES = ['own', 'relay'] as const;
export const STORAGE_DRIVERS = ['local', 's3'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The settings, in the order of the README's table. */
export const SETTINGS = {
  PORT: integer({
    min: 0,
    max: 65_535,
    default: 8080,
    meaning: 'Port of the HTTP API **and** the WebSocket server (`/app/{key}`). `0`: any free port.',
  }),
  HOST: text({ default: '0.0.0.0', meaning: 'Address to bind.' }),
  CHAT_DATA_DIR: text({
    default: './data',
    meaning:
      'Data directory: the embedded database (`pglite/`), uploaded files (`attachments/` with `CHAT_STORAGE=local`, also used with PostgreSQL) and generated secrets (`secrets.json`). Several nodes need `CHAT_STORAGE=s3`, or `attachments/` on a shared volume.',
  }),
  CHAT_STORAGE: oneOf(STORAGE_DRIVERS, {
    default: 'local',
    meaning:
      'Where attachment files live: `local`, under `CHAT_DATA_DIR/attachments`; `s3`, in the S3-compatible bucket `S3_BUCKET` (AWS S3, MinIO, R2...; see docs/deployment.md). Files are streamed both ways.',
  }),
  S3_BUCKET: text({ default: null, meaning: 'With `CHAT_STORAGE=s3` (required): the bucket. Objects go under `attachments/`; keep the bucket private.' }),
  S3_ENDPOINT: url(['https', 'http'], '`https://minio.example.com:9000`', {
    default: null,
    defaultText: 'unset: AWS S3 of `S3_REGION`',
    meaning: 'With `CHAT_STORAGE=s3`: the endpoint of an S3-compatible store (MinIO, R2: `https://<account>.r2.cloudflarestorage.com`).',
  }),
  S3_REGION: text({ default: 'us-east-1', meaning: 'With `CHAT_STORAGE=s3`: the region (R2: `auto`).' }),
  S3_ACCESS_KEY_ID: text({
    default: null,
    defaultText: 'unset: the AWS SDK\'s credential chain',
    meaning: 'With `CHAT_STORAGE=s3`: the access key, set with `S3_SECRET_ACCESS_KEY`; unset, the AWS SDK finds credentials itself (instance role, `AWS_*` variables).',
  }),
  S3_SECRET_ACCESS_KEY: text({
    default: null,
    defaultText: 'unset: the AWS SDK\'s credential chain',
    given: (raw) => `${raw.length} characters`,
    meaning: 'With `CHAT_STORAGE=s3`: the secret key, set with `S3_ACCESS_KEY_ID`.',
  }),
  S3_FORCE_PATH_STYLE: boolean({
    default: false,
    meaning: 'With `CHAT_STORAGE=s3`: address the bucket in the path (`endpoint/bucket/key`) instead of the host name. On for MinIO and most self-hosted stores.',
  }),
  CHAT_UPLOAD_QUOTA_BYTES: positive({
    default: 1024 * MIB,
    unit: 'bytes',
    meaning: 'Per user: the bytes of all their attachments together. An upload that would go over it is refused with 413 `quota_exceeded`.',
  }),
  CHAT_UNSENT_UPLOAD_TTL_S: positive({
    default: 86_400,
    unit: 'seconds',
    meaning: 'An upload not sent with any message within this time is deleted, row and file.',
  }),
  DATABASE_URL: url(['postgres', 'postgresql'], '`postgres://user:password@host:5432/database`', {
    default: null,
    defaultText: 'unset: embedded PGlite in `CHAT_DATA_DIR`',
    meaning: 'PostgreSQL connection URL, e.g. `postgres://user:pass@host:5432/parley`.',
  }),
  DATABASE_PREPARED_STATEMENTS: boolean({
    default: true,
    meaning:
      'PostgreSQL only: every query with parameters goes as a named prepared statement, so PostgreSQL parses and plans it once per connection rather than on every request. Off sends them unnamed: needed behind PgBouncer in transaction mode older than 1.21 or without `max_prepared_statements`. See [docs/deployment.md](docs/deployment.md#prepared-statements).',
  }),
  DATABASE_SEND_LANES: positive({
    default: 1,
    meaning:
      'PostgreSQL only: how many batches of sends each node writes at once. Sends that arrive together are checked and written as one batch in one round trip (a group commit); sends to one conversation always share a lane, so their order holds. One lane makes the biggest batches and the least CPU per message (on 2 cores: 3,000 messages/s with 1 lane against 2,800 with 2); more lanes can help when the database server has many cores to spare. Each lane holds one pooled connection while it writes. See [docs/api.md](docs/api.md#concurrent-requests).',
  }),
  DATABASE_REPLICA_URLS: postgresUrlList({
    defaultText: 'unset: every read on `DATABASE_URL`',
    meaning:
      'PostgreSQL only: streaming replicas of `DATABASE_URL` (hot standbys), e.g. `postgres://parley@replica1:5432/parley,postgres://parley@replica2:5432/parley`. Reads that tolerate a little lag (history, threads, pins, search, user search, exports) go to a replica within `DATABASE_REPLICA_MAX_LAG_MS`; a user who just wrote reads from the primary; a replica down or too far behind is skipped. See [docs/deployment.md](docs/deployment.md#read-replicas).',
  }),
  DATABASE_REPLICA_MAX_LAG_MS: positive({
    default: 1000,
    unit: 'milliseconds',
    meaning:
      'With `DATABASE_REPLICA_URLS`: how far behind the primary a replica may be and still serve reads, and how long a user\'s reads go to the primary after their own write (read-your-writes).',
  }),
  REDIS_URL: url(['redis', 'rediss'], '`redis://:password@host:6379`', {
    default: null,
    defaultText: 'unset: one node, all state in its memory',
    meaning:
      'Redis (6.2 or newer) for running **several nodes**, e.g. `redis://:password@redis.internal:6379`. The nodes share event fan-out (pub/sub), presence, typing expiry and pending channel authorizations through it. Several nodes also need `DATABASE_URL` (PostgreSQL). See [docs/deployment.md](docs/deployment.md#several-nodes).',
  }),
  REDIS_CLUSTER_NODES: hostPortList({
    defaultText: 'unset: no Redis Cluster',
    meaning:
      'A **Redis Cluster** (Redis 7 or newer) instead of `REDIS_URL`: some or all of its nodes, e.g. `10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000`; the rest are found from them. Each channel\'s events go on a shard channel of its own (`SSUBSCRIBE`/`SPUBLISH`), so the masters share the traffic; a master\'s failover is followed. See [docs/deployment.md](docs/deployment.md#redis-cluster).',
  }),
  REDIS_SENTINELS: hostPortList({
    defaultText: 'unset: no Sentinel',
    meaning:
      'A Redis primary managed by **Redis Sentinel**, instead of `REDIS_URL`: the sentinels, e.g. `10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379`, with `REDIS_SENTINEL_MASTER`. The nodes ask them for the primary and follow a failover without a restart. See [docs/deployment.md](docs/deployment.md#redis-sentinel).',
  }),
  REDIS_SENTINEL_MASTER: text({
    default: null,
    defaultText: 'unset',
    meaning: 'With `REDIS_SENTINELS`: the name the sentinels monitor the primary under (`sentinel monitor <name> ...`), e.g. `parley`.',
  }),
  REDIS_PREFIX: text({
    default: 'parley:',
    meaning:
      'Prefix of every Redis key and pub/sub topic. The same on every node of a deployment; give each deployment that shares one Redis its own.',
  }),
  CHAT_JWT_SECRET: secret({ default: null, defaultText: GENERATED, meaning: 'HS256 secret for user tokens.' }),
  CHAT_JWT_ISSUER: text({
    default: null,
    defaultText: 'unset: not checked',
    meaning: 'When set, a user token must carry this `iss`, and the tokens Parley issues (`POST /users/{id}/tokens`, `npm run token`) carry it.',
  }),
  CHAT_JWT_AUDIENCE: text({
    default: null,
    defaultText: 'unset: not checked',
    meaning: 'When set, a user token\'s `aud` must be (or include) this value, and the tokens Parley issues carry it.',
  }),
  CHAT_JWT_MAX_TTL_S: integer({
    min: 60,
    unit: 'seconds',
    default: 30 * 24 * 3600,
    defaultText: '`2592000` (30 days)',
    meaning:
      'Longest lifetime of a user token: one whose `exp` is further than this from its `iat`, or from now, is refused (401). Tokens Parley issues cannot ask for more (422).',
  }),
  CHAT_SERVER_KEY: secret({ default: null, defaultText: GENERATED, meaning: 'Key your backend sends as `X-Chat-Server-Key`.' }),
  METRICS_TOKEN: secret({
    default: null,
    defaultText: 'unset: `/metrics` from loopback only',
    meaning:
      'Bearer token for `GET /metrics` (and the details of `/readyz`) from other hosts: Prometheus sends `Authorization: Bearer <token>`. Unset, they answer only to clients on the same host that did not come through a proxy. See [docs/deployment.md](docs/deployment.md#shutdown-logs-health-metrics).',
  }),
  BROADCAST_DRIVER: oneOf(BROADCAST_DRIVERS, {
    default: 'builtin',
    meaning:
      '`builtin`: the embedded Pusher-protocol WebSocket server. `pusher`: no socket server, events go to an external Pusher-compatible server (hosted Pusher, Soketi, Reverb, another Parley) through its HTTP API; see [docs/pusher-driver.md](docs/pusher-driver.md) and the `PUSHER_*` rows below. `log`: no socket server, events are only logged.',
  }),
  BROADCAST_APP_ID: text({
    default: null,
    defaultText: GENERATED,
    meaning: 'Pusher app id: the `{app_id}` of the Pusher HTTP API (`/apps/{app_id}/events`).',
  }),
  BROADCAST_APP_KEY: text({ default: null, defaultText: GENERATED, meaning: 'Public app key clients connect with (`/app/{key}`).' }),
  BROADCAST_APP_SECRET: secret({
    default: null,
    defaultText: GENERATED,
    meaning: 'Secret that signs channel authorizations and Pusher HTTP API requests.',
  }),
  BROADCAST_ACTIVITY_TIMEOUT: positive({
    unit: 'seconds',
    default: 30,
    meaning:
      'Sent to clients as `activity_timeout`. The server pings a socket that has been silent this long and closes it if no answer comes within 30 s.',
  }),
  BROADCAST_MAX_MESSAGE_BYTES: positive({
    unit: 'bytes',
    default: 20_000,
    meaning: 'Largest WebSocket frame a client may send; a larger one closes the socket with 1009.',
  }),
  BROADCAST_MAX_EVENT_BYTES: positive({
    unit: 'bytes',
    default: 10 * KIB,
    meaning: 'Largest `data` of one event: the HTTP API answers 413, a client event gets `pusher:error` 4301.',
  }),
  BROADCAST_MAX_API_BODY_BYTES: positive({
    unit: 'bytes',
    default: 256 * KIB,
    meaning: 'Largest Pusher HTTP API request body (413 above it).',
  }),
  BROADCAST_MAX_CONNECTIONS: positive({
    default: 50_000,
    meaning: 'Sockets per node; more are refused with 4100 (pusher-js backs off and retries).',
  }),
  BROADCAST_MAX_CONNECTIONS_PER_ADDRESS: positive({
    default: 100,
    meaning:
      'Sockets per node from one client address (its /64 for IPv6); more are refused with 4100 (pusher-js backs off and retries). Behind a reverse proxy, set `CHAT_TRUSTED_PROXIES`, or every socket counts against the proxy\'s address. See [docs/deployment.md](docs/deployment.md#limits).',
  }),
  BROADCAST_MAX_CHANNELS_PER_CONNECTION: positive({
    default: 100,
    meaning: 'Subscriptions per socket; more are refused (`subscription_error` 429) and the socket stays open.',
  }),
  BROADCAST_MAX_FRAMES_PER_SECOND: positive({
    default: 20,
    meaning:
      'Frames (and WebSocket pings) one socket may send per second on average, beyond `BROADCAST_MAX_FRAME_BURST` at once. Beyond them frames are dropped (`pusher:error` 4301, once per run); a socket that sends as many again is closed with 4100.',
  }),
  BROADCAST_MAX_FRAME_BURST: positive({
    default: 200,
    meaning:
      'Frames one socket may send at once (its allowance, refilled at `BROADCAST_MAX_FRAMES_PER_SECOND`). Keep it above `BROADCAST_MAX_CHANNELS_PER_CONNECTION`: pusher-js subscribes to all its channels at once when it reconnects.',
  }),
  BROADCAST_MAX_PRESENCE_MEMBERS: positive({
    default: 100,
    meaning: 'Distinct users on one presence channel (`subscription_error` 403 above it).',
  }),
  BROADCAST_MAX_BUFFERED_BYTES: positive({
    unit: 'bytes',
    default: MIB,
    meaning: 'Unsent bytes a socket may hold before it is closed with 4100 (a client that stopped reading).',
  }),
  BROADCAST_CLIENT_EVENTS: boolean({ default: true, meaning: 'Off refuses `client-*` events (Echo\'s `whisper`).' }),
  BROADCAST_CLIENT_EVENTS_PER_SECOND: positive({ default: 10, meaning: 'Client events per socket per second (4301 above it).' }),
  BROADCAST_ALLOWED_ORIGINS: list({
    defaultText: 'empty (any)',
    meaning: 'Browser origins allowed to open a socket (`*` for any); others are closed with 4009.',
  }),
  BROADCAST_WEBHOOK_URLS: urlList({
    defaultText: 'empty (none)',
    meaning:
      'Pusher webhooks of the built-in server: `channel_occupied`, `channel_vacated`, `member_added`, `member_removed` and `client_event` are POSTed to each URL as `{time_ms, events}`, signed with `X-Pusher-Key` and `X-Pusher-Signature`, batched, retried with backoff; sent once per cluster.',
  }),
  BROADCAST_APPS_FILE: text({
    default: null,
    defaultText: 'unset (the default app only)',
    meaning:
      'A JSON file of further Pusher apps the built-in server serves beside the default one: `[{"id", "key", "secret", "webhook_urls"?, "client_events"?, "max_connections"?}]`. Each app is isolated (channels, presence, HTTP API credentials, limits, webhooks); Parley\'s chat channels belong to the default app. See [docs/pusher-server.md](docs/pusher-server.md#several-apps).',
  }),
  BROADCAST_CHAT_CHANNELS: oneOf(CHAT_CHANNEL_MODES, {
    default: 'own',
    meaning:
      '`relay` on a Parley whose built-in server carries **another** Parley\'s chat events (that one has `BROADCAST_DRIVER=pusher`): its `private-chat.*` subscriptions then need only a valid signature, as that Parley authorizes them. `own`: they need a fresh authorization from this Parley\'s auth endpoint.',
  }),
  PUSHER_APP_ID: text({
    default: null,
    defaultText: 'required with `BROADCAST_DRIVER=pusher`',
    meaning: 'The external server\'s app id.',
  }),
  PUSHER_APP_KEY: text({
    default: null,
    defaultText: 'required with `BROADCAST_DRIVER=pusher`',
    meaning: 'The external server\'s app key. Channel authorizations are then signed with it and `PUSHER_APP_SECRET`.',
  }),
  PUSHER_APP_SECRET: text({
    default: null,
    defaultText: 'required with `BROADCAST_DRIVER=pusher`',
    meaning: 'The external server\'s app secret.',
  }),
  PUSHER_APP_CLUSTER: text({ default: 'mt1', meaning: 'Hosted Pusher\'s cluster, used when `PUSHER_HOST` is unset.' }),
  PUSHER_HOST: text({
    default: null,
    defaultText: 'unset: hosted Pusher (`api-{cluster}.pusher.com`)',
    meaning: 'Host of the external server\'s HTTP API, as Parley reaches it.',
  }),
  PUSHER_PORT: port({ default: null, defaultText: '`443` (https), `80` (http)', meaning: 'Its port.' }),
  PUSHER_SCHEME: oneOf(['https', 'http'] as const, { default: 'https', meaning: 'How Parley reaches it.' }),
  PUSHER_CLIENT_HOST: text({
    default: null,
    defaultText: '`PUSHER_HOST`',
    meaning:
      'Where browsers reach the external server\'s WebSocket, if not at Parley\'s address for it (`GET /api/chat/v1/client-config` tells them).',
  }),
  PUSHER_CLIENT_PORT: port({
    default: null,
    defaultText: '`PUSHER_PORT` (if no other `PUSHER_CLIENT_*` is set), else by scheme',
    meaning: 'Its port for browsers.',
  }),
  PUSHER_CLIENT_SCHEME: oneOf(['https', 'http'] as const, {
    default: null,
    defaultText: '`PUSHER_SCHEME`',
    meaning: '`https` (wss) or `http` (ws) for browsers.',
  }),
  PUSHER_MAX_EVENT_BYTES: positive({
    unit: 'bytes',
    default: 10 * KIB,
    meaning:
      'The largest event `data` the external server takes. A larger event is not sent: it is logged at error level and counted, and clients catch up over HTTP.',
  }),
  CHAT_PRESENCE_TIMEOUT_MS: positive({
    unit: 'ms',
    default: 70_000,
    meaning: 'A user without a heartbeat for this long goes offline (`UserPresenceChanged` `false`). Clients beat every 30 s.',
  }),
  CHAT_PRESENCE_SWEEP_MS: positive({ unit: 'ms', default: 5_000, meaning: 'How often expired heartbeats are looked for.' }),
  CHAT_TYPING_TIMEOUT_MS: positive({
    unit: 'ms',
    default: 8_000,
    meaning: 'A typing start not renewed within this time is followed by `is_typing: false` from the server.',
  }),
  CHAT_CORS_ORIGINS: list({
    defaultText: 'empty',
    meaning:
      'Browser origins allowed to call the API from another origin (e.g. `https://app.example.com`): every method the API uses and the `Authorization`, `Content-Type`, `X-Socket-ID` and `X-Request-Id` headers (never `X-Chat-Server-Key`). Empty: no CORS headers, so only same-origin pages (or non-browser clients) can call it.',
  }),
  CHAT_BODY_MAX_CHARS: positive({ default: 10_000, meaning: 'Maximum message length in characters.' }),
  CHAT_ATTACHMENT_MAX_BYTES: positive({
    unit: 'bytes',
    default: 25 * MIB,
    defaultText: '`26214400` (25 MiB)',
    meaning: 'Maximum attachment size.',
  }),
  CHAT_GROUP_MAX_PARTICIPANTS: positive({ default: 10_000, meaning: 'Maximum group size.' }),
  CHAT_SYNC_RETENTION_S: integer({
    min: 1,
    unit: 'seconds',
    default: 7 * 24 * 3600,
    defaultText: '`604800` (7 days)',
    meaning:
      'How long the change feed keeps a change for `GET /sync`: a cursor older than this answers 410 `cursor_expired` (the client reloads). Older changes are deleted in the background. See [docs/deployment.md](docs/deployment.md#the-change-feed).',
  }),
  CHAT_MESSAGE_RETENTION_DAYS: {
    type: 'a positive number of days (fractions allowed)',
    default: null,
    defaultText: 'unset: messages are kept forever',
    meaning:
      'Messages older than this are deleted, with their attachment files, by a background sweep (first within a minute of start, then every hour; one node at a time). See [docs/deployment.md](docs/deployment.md#message-retention).',
    parse: (raw: string) => {
      const value = Number(raw.trim());
      return /^\d*\.?\d+$/.test(raw.trim()) && Number.isFinite(value) && value > 0 ? value : undefined;
    },
  } satisfies Setting<number | null>,
  CHAT_BLOCKED_WORDS: text({
    default: null,
    defaultText: 'unset: no word is blocked',
    meaning:
      'Words (or phrases) no message or edit may contain as whole words, compared as search compares them (case and accents aside): comma-separated, or `@/path/to/file` naming a file of them, one a line or comma-separated, read once at start (a file that cannot be read stops the start). Refused with 422 `blocked_word`. See [docs/api.md](docs/api.md#blocked-words).',
  }),
  CHAT_REQUEST_TIMEOUT_S: positive({
    unit: 'seconds',
    default: 30,
    meaning:
      'Time a client has to send a request\'s headers, and its body before the body has earned more time (see the next row); a request cut off gets 408 and its connection is closed.',
  }),
  CHAT_REQUEST_MIN_BYTES_PER_S: positive({
    unit: 'bytes',
    default: 16_384,
    meaning:
      'Each this many bytes of a request body received give it one more second, so an upload that keeps arriving at this rate (16 KiB/s, about 128 kbit/s) or faster is never cut off, whatever its size, and a trickle is.',
  }),
  CHAT_RATE_SENDS_PER_MINUTE: ratePerMinute({ default: 600, meaning: 'Per-user limit on sends and forwards. Every rate limit counts over a sliding minute, shared by all nodes with `REDIS_URL` (else per node); over it: 429 with `Retry-After`.' }),
  CHAT_RATE_TYPING_PER_MINUTE: ratePerMinute({ default: 120, meaning: 'Per-user limit on typing signals.' }),
  CHAT_RATE_HEARTBEATS_PER_MINUTE: ratePerMinute({ default: 30, meaning: 'Per-user limit on presence heartbeats and offline signals.' }),
  CHAT_RATE_CHANNEL_AUTHS_PER_MINUTE: ratePerMinute({ default: 300, meaning: 'Per-user limit on channel authorizations (`/broadcasting/auth`, `/broadcasting/user-auth`).' }),
  CHAT_RATE_EDITS_PER_MINUTE: ratePerMinute({ default: 120, meaning: 'Per-user limit on message edits and deletions.' }),
  CHAT_RATE_READS_PER_MINUTE: ratePerMinute({ default: 600, meaning: 'Per-user limit on read marks (`POST /conversations/{id}/read`).' }),
  CHAT_RATE_CONVERSATIONS_PER_MINUTE: ratePerMinute({
    default: 60,
    meaning: 'Per-user limit on opening direct conversations, creating groups and changing them (name, avatar, participants, roles, leaving, deleting).',
  }),
  CHAT_RATE_GROUPS_PER_HOUR: ratePerHour({
    default: 30,
    meaning:
      'Per-user limit on creating groups, over any hour (a sliding hour, on top of the per-minute limit above): each new group puts its members in touch with its creator and shows them each other\'s presence. See [docs/deployment.md](docs/deployment.md#limits).',
  }),
  CHAT_RATE_UPLOADS_PER_MINUTE: ratePerMinute({ default: 60, meaning: 'Per-user limit on uploads (`POST /attachments`).' }),
  CHAT_RATE_BLOCKS_PER_MINUTE: ratePerMinute({ default: 60, meaning: 'Per-user limit on blocks and unblocks.' }),
  CHAT_RATE_OTHER_WRITES_PER_MINUTE: ratePerMinute({
    default: 300,
    meaning: 'Per-user limit on every other write of the user API (reactions, mutes, push subscriptions, ...), each request counted once.',
  }),
  CHAT_RATE_SEARCHES_PER_MINUTE: ratePerMinute({
    default: 120,
    meaning: 'Per-user limit on searches (`GET /search/messages`, `GET /users`): the reads that cost the most.',
  }),
  CHAT_RATE_HISTORY_PAGES_PER_MINUTE: ratePerMinute({ default: 1200, meaning: 'Per-user limit on history pages (`GET /conversations/{id}/messages`).' }),
  CHAT_RATE_AUTH_FAILURES_PER_MINUTE: ratePerMinute({
    default: 60,
    meaning:
      'Per-address limit on failed authentications (a missing or bad token, a bad server key): over it, those requests answer 429 instead of 401; requests that authenticate are never refused. The address is the client\'s (its /64 for IPv6), see `CHAT_TRUSTED_PROXIES` behind a proxy.',
  }),
  CHAT_TRUSTED_PROXIES: addressList({
    defaultText: 'empty (none)',
    meaning:
      'Addresses or CIDR ranges of reverse proxies (e.g. `127.0.0.1,10.0.0.0/8`) whose `X-Forwarded-For` gives the client\'s address, for the failed-authentication limit, the sockets per address (`BROADCAST_MAX_CONNECTIONS_PER_ADDRESS`) and the logs. Empty: the address that connected is the client\'s.',
  }),
  CHAT_VAPID_PUBLIC_KEY: text({
    default: null,
    defaultText: 'generated into `vapid.json`',
    meaning:
      'Web Push: the VAPID public key (uncompressed P-256 point, base64url), handed to browsers by `GET /push/config`. Set it with `CHAT_VAPID_PRIVATE_KEY` (`npx web-push generate-vapid-keys`); unset, a pair is generated once into `CHAT_DATA_DIR/vapid.json`. Several nodes need the same pair.',
  }),
  CHAT_VAPID_PRIVATE_KEY: text({
    default: null,
    defaultText: 'generated into `vapid.json`',
    given: (raw) => `${raw.length} characters`,
    meaning: 'Web Push: the VAPID private key (base64url), set together with `CHAT_VAPID_PUBLIC_KEY`.',
  }),
  CHAT_VAPID_SUBJECT: text({
    default: 'mailto:parley@localhost',
    meaning: 'Web Push: the VAPID subject, a `mailto:` or `https:` URL push services may use to reach the operator.',
  }),
  CHAT_PUSH_ALLOW_HTTP: boolean({
    default: false,
    meaning:
      'Web Push: also accept `http://` endpoints and loopback addresses (development and tests only). Off: endpoints must be `https` and never resolve to a private, loopback or link-local address.',
  }),
  CHAT_WEBHOOK_URLS: {
    ...list({
      meaning:
        'Webhooks to the host app (docs/notifications.md): URLs that get one signed POST per chat action (`MessageSent`, `MessageUpdated`, ...), delivered at least once through the outbox. Empty: no webhooks.',
    }),
    type: 'comma-separated `http://` or `https://` URLs',
    fix: 'write each as https://app.example/parley-webhook',
    parse: (raw: string) => {
      const urls = raw.split(',').map((u) => u.trim()).filter(Boolean);
      const ok = urls.every((u) => {
        try {
          return ['http:', 'https:'].includes(new URL(u).protocol);
        } catch {
          return false;
        }
      });
      return ok ? Object.freeze(urls) : undefined;
    },
  },
  CHAT_WEBHOOK_SECRET: secret({
    default: null,
    defaultText: 'generated into `webhook-secret`',
    meaning: 'The HMAC-SHA256 key of `X-Parley-Signature` on webhooks. Unset: generated once into `CHAT_DATA_DIR/webhook-secret`. Several nodes need the same secret.',
  }),
  LOG_LEVEL: oneOf(LOG_LEVELS, { default: 'info', meaning: 'pino level. `debug` also prints the stack of a startup failure.' }),
  CHAT_DEMO: boolean({
    default: false,
    meaning:
      'Turns on the web client\'s **demo sign-in** by user id and name (`POST /api/chat/v1/demo/token`), for trying Parley out. Anyone can then sign in as anyone: never turn it on in production.',
  }),
} satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;
export type SettingValues = { readonly [K in SettingName]: (typeof SETTINGS)[K] extends Setting<infer T> ? T : never };
type Env = Readonly<Record<string, string | undefined>>;

/** The default of one setting (for code that takes these values from elsewhere, e.g. the real-time server's options). */
export function settingDefault<K extends SettingName>(name: K): SettingValues[K] {
  return SETTINGS[name].default as SettingValues[K];
}

/** The README's Default column of a row. */
export function defaultText(setting: Setting<unknown>): string {
  if (setting.defaultText !== undefined) return setting.defaultText;
  const value = setting.default;
  if (value === null) return 'unset';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (value === '' || (Array.isArray(value) && value.length === 0)) return 'empty';
  return `\`${String(value)}\``;
}

const plain = (markdown: string) => markdown.replaceAll('`', '');

/** The default as an error line names it, in one pair of parentheses: "2592000 (30 days)" -> "2592000, 30 days". */
const defaultInErrors = (setting: Setting<unknown>) => plain(defaultText(setting)).replace(/^(.*\S) \(([^()]*)\)$/, '$1, $2');

/** One line: "NAME must be <type>, got <what>. Fix: <how>." */
function invalid(name: string, setting: Setting<unknown>, raw: string): ConfigError {
  const got = setting.given?.(raw) ?? `"${raw}"`;
  const unset = setting.default === null ? 'unset it' : `unset it for the default (${defaultInErrors(setting)})`;
  const fix = setting.fix ?? `correct ${name}, or ${unset}`;
  return new ConfigError(`${name} must be ${plain(setting.typeInErrors ?? setting.type)}, got ${got}. Fix: ${plain(fix)}.`);
}

/** One setting's value in env: the default when unset or empty; a ConfigError when not a valid value. */
export function readSetting<K extends SettingName>(env: Env, name: K): SettingValues[K] {
  const setting: Setting<unknown> = SETTINGS[name];
  const raw = env[name];
  if (raw === undefined || raw === '') return setting.default as SettingValues[K];
  const value = setting.parse(raw);
  if (value === undefined) throw invalid(name, setting, raw);
  return value as SettingValues[K];
}

/** Every setting's value in env. */
export function readSettings(env: Env): SettingValues {
  const values: Record<string, unknown> = {};
  for (const name of Object.keys(SETTINGS) as SettingName[]) values[name] = readSetting(env, name);
  return values as SettingValues;
}

/** The README's configuration table (Markdown), generated from SETTINGS. */
export function settingsTable(): string {
  const cell = (s: string) => s.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const rows = Object.entries(SETTINGS).map(
    ([name, setting]: [string, Setting<unknown>]) => `| \`${name}\` | ${cell(setting.type)} | ${cell(defaultText(setting))} | ${cell(setting.meaning)} |`,
  );
  return ['| Variable | Type | Default | Meaning |', '|---|---|---|---|', ...rows].join('\n');
}
