// Why Parley could not start, in one line that says what is wrong and how to fix it, with the exit code:
// 2 when the configuration is wrong (a setting to change), 1 when something outside failed (a busy port, a
// database or Redis that cannot be reached). main.ts prints the line; the stack only with LOG_LEVEL=debug.
import type { HostPort, RedisDeployment } from './config/index.js';
import { ConfigError } from './config/settings.js';

export class StartupError extends Error {
  constructor(
    message: string,
    /** 2: the configuration is wrong; 1: something outside Parley failed. */
    readonly exitCode: 1 | 2 = 1,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

interface SystemError extends Error {
  code?: string;
}

/**
 * An error that already explains itself in one line and knows its exit code: a StartupError, or another
 * module's error with an `exitCode` (e.g. the data directory lock's). It is passed on as it is.
 */
export function isExplained(err: unknown): err is Error & { exitCode: 1 | 2 } {
  return err instanceof Error && ((err as { exitCode?: unknown }).exitCode === 1 || (err as { exitCode?: unknown }).exitCode === 2);
}

const codeOf = (err: unknown): string | undefined => (err instanceof Error ? (err as SystemError).code : undefined);

/** A network error's code in words. */
function reason(err: unknown): string {
  switch (codeOf(err)) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEDOUT':
      return 'no answer (timed out)';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      return err instanceof Error ? err.message : String(err);
  }
}

/** host:port of a URL, never its credentials. */
function where(url: string, defaultPort: number): string {
  try {
    const u = new URL(url);
    return `${u.hostname || 'localhost'}:${u.port || defaultPort}`;
  } catch {
    return 'the configured address';
  }
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Opening or migrating the database failed. */
export function databaseStartupError(err: unknown, databaseUrl: string | null, dataDir: string): Error {
  if (isExplained(err)) return err;
  if (databaseUrl === null) {
    const file = fileStartupError(err);
    if (file) return file;
    return new StartupError(
      `Cannot open the embedded database in ${dataDir}: ${err instanceof Error ? err.message : String(err)}. Fix: make CHAT_DATA_DIR a writable directory of its own, or set DATABASE_URL.`,
      1,
      { cause: err },
    );
  }
  const at = where(databaseUrl, 5432);
  const code = codeOf(err);
  let line: string;
  if (code === '3D000') {
    const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1)) || '(none)';
    const [host, port] = at.split(':');
    line = `PostgreSQL at ${at} has no database "${name}". Fix: create it (createdb -h ${host} -p ${port} ${name}), or correct DATABASE_URL.`;
  } else if (code === '28P01' || code === '28000') {
    line = `PostgreSQL at ${at} refused the connection: ${(err as Error).message}. Fix: correct the user or password in DATABASE_URL, or allow it in pg_hba.conf.`;
  } else if (code !== undefined && NETWORK_CODES.has(code)) {
    line = `Cannot reach PostgreSQL at ${at} (${reason(err)}). Fix: start PostgreSQL there, or correct DATABASE_URL.`;
  } else {
    line = `PostgreSQL at ${at} failed: ${reason(err)}. Fix: check DATABASE_URL and the PostgreSQL server's log.`;
  }
  return new StartupError(line, 1, { cause: err });
}

/** Connecting to Redis failed (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS: `target` says which). */
export function redisStartupError(err: unknown, target: string | RedisDeployment): Error {
  if (isExplained(err)) return err;
  const deployment: RedisDeployment = typeof target === 'string' ? { kind: 'single', url: target } : target;
  const message = err instanceof Error ? err.message : String(err);
  const addresses = (list: readonly HostPort[]) => list.map(({ host, port }) => `${host}:${port}`).join(', ');
  let line: string;
  if (deployment.kind === 'cluster') {
    line = `Cannot reach the Redis Cluster at ${addresses(deployment.nodes)} (${message}). Fix: start the cluster (every slot served), or correct REDIS_CLUSTER_NODES.`;
  } else if (deployment.kind === 'sentinel') {
    line = `Cannot reach Redis primary "${deployment.master}" through the sentinels at ${addresses(deployment.sentinels)} (${message}). Fix: start the sentinels and the primary, or correct REDIS_SENTINELS and REDIS_SENTINEL_MASTER.`;
  } else {
    const at = where(deployment.url, 6379);
    line = /NOAUTH|WRONGPASS|invalid password|AUTH/i.test(message)
      ? `Redis at ${at} refused the connection: ${message}. Fix: correct the password in REDIS_URL.`
      : `Cannot reach Redis at ${at} (${reason(err)}). Fix: start Redis there, or correct REDIS_URL (unset it to run one node without Redis).`;
  }
  return new StartupError(line, 1, { cause: err });
}

/** Listening on HOST:PORT failed. */
export function listenStartupError(err: unknown, host: string, port: number): StartupError {
  switch (codeOf(err)) {
    case 'EADDRINUSE':
      return new StartupError(
        `Port ${port} on ${host} is in use (another Parley or another program listens there). Fix: stop that program, or set PORT to a free port.`,
        1,
        { cause: err },
      );
    case 'EACCES':
      return new StartupError(`Not allowed to listen on port ${port}. Fix: set PORT to a port above 1023, or run behind a reverse proxy.`, 1, { cause: err });
    case 'EADDRNOTAVAIL':
      return new StartupError(`HOST ${host} is not an address of this machine. Fix: set HOST to one of its addresses, or 0.0.0.0 for all.`, 2, {
        cause: err,
      });
    default:
      return new StartupError(`Cannot listen on ${host}:${port}: ${reason(err)}.`, 1, { cause: err });
  }
}

const FILE_CODES: Record<string, string> = {
  EEXIST: 'a file is in the way of a directory',
  ENOTDIR: 'a file is in the way of a directory',
  EISDIR: 'a directory is in the way of a file',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
};

/**
 * A file or directory Parley keeps in its data directory (generated keys, uploads) could not be made: CHAT_DATA_DIR
 * names a file, or a directory it may not write. A setting to change (or the directory's permissions): exit code 2.
 */
function fileStartupError(err: unknown): StartupError | null {
  if (!(err instanceof Error)) return null;
  const { code, path, syscall } = err as SystemError & { path?: string; syscall?: string };
  if (code === undefined || !(code in FILE_CODES) || typeof path !== 'string') return null;
  return new StartupError(
    `Cannot ${syscall ?? 'write'} ${path} (${FILE_CODES[code]}, ${code}). Fix: give Parley a directory it can write: correct CHAT_DATA_DIR (default ./data), or that directory's permissions.`,
    2,
    { cause: err },
  );
}

/** What main.ts prints for an error that stopped the start, and the exit code. */
export function describeStartupFailure(err: unknown, debug: boolean): { text: string; exitCode: 1 | 2 } {
  let line: string;
  let exitCode: 1 | 2;
  err = fileStartupError(err) ?? err;
  if (err instanceof ConfigError) {
    [line, exitCode] = [`Configuration error: ${err.message}`, 2];
  } else if (isExplained(err)) {
    [line, exitCode] = [`Parley could not start: ${err.message}`, err.exitCode];
  } else {
    [line, exitCode] = [`Parley could not start: ${err instanceof Error ? err.message : String(err)}${debug ? '' : ' (LOG_LEVEL=debug shows where)'}`, 1];
  }
  // A configuration error's stack would only show where the settings are read.
  const stack = debug && err instanceof Error && !(err instanceof ConfigError) ? `\n${(err.cause instanceof Error ? err.cause : err).stack ?? ''}` : '';
  return { text: line + stack, exitCode };
}
