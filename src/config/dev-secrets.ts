// Development secrets for the embedded default: when any of the five secrets is not set, they are generated
// once into CHAT_DATA_DIR/secrets.json (mode 0600) and read from there on later starts, so tokens survive
// restarts. This is the only place that writes them; loadConfig stays a pure function of its inputs.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, readSetting } from './settings.js';

export interface DevSecrets {
  readonly jwtSecret: string;
  readonly serverKey: string;
  readonly appId: string;
  readonly appKey: string;
  readonly appSecret: string;
}

/** Each secret's variable, by its key in secrets.json. */
export const DEV_SECRET_NAMES = {
  jwtSecret: 'CHAT_JWT_SECRET',
  serverKey: 'CHAT_SERVER_KEY',
  appId: 'BROADCAST_APP_ID',
  appKey: 'BROADCAST_APP_KEY',
  appSecret: 'BROADCAST_APP_SECRET',
} as const satisfies Record<keyof DevSecrets, string>;

type Env = Readonly<Record<string, string | undefined>>;

/** Does env leave any of the five secrets unset (so development secrets fill the gaps)? */
export function needsDevSecrets(env: Env): boolean {
  return Object.values(DEV_SECRET_NAMES).some((name) => env[name] === undefined || env[name] === '');
}

export function devSecretsFile(env: Env): string {
  return join(resolve(readSetting(env, 'CHAT_DATA_DIR')), 'secrets.json');
}

/**
 * The development secrets env needs: null when it sets all five; else those in CHAT_DATA_DIR/secrets.json,
 * generated there first if the file does not exist.
 */
export function loadDevSecrets(env: Env): { secrets: DevSecrets; file: string; created: boolean } | null {
  if (!needsDevSecrets(env)) return null;
  const file = devSecretsFile(env);
  const dir = resolve(file, '..');
  /** The data directory is not one Parley can use: a file, unreadable, read-only. */
  const unusable = (err: unknown, doing: string) =>
    new ConfigError(
      `Cannot ${doing} ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): CHAT_DATA_DIR (${dir}) must be a directory Parley can read and write. Fix: point CHAT_DATA_DIR at one (or a path where it may create one), or set all five secrets.`,
    );
  if (existsSync(file)) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw unusable(err, 'read the development secrets in');
    }
    let secrets: DevSecrets;
    try {
      secrets = JSON.parse(text) as DevSecrets;
    } catch (err) {
      throw new ConfigError(`${file} is not valid JSON (${(err as Error).message}). Fix: delete it to generate new development secrets, or set all five secrets.`);
    }
    return { secrets, file, created: false };
  }
  const secrets: DevSecrets = {
    jwtSecret: randomBytes(32).toString('hex'),
    serverKey: randomBytes(24).toString('hex'),
    appId: String(100000 + (randomBytes(3).readUIntBE(0, 3) % 900000)),
    appKey: randomBytes(10).toString('hex'),
    appSecret: randomBytes(20).toString('hex'),
  };
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, JSON.stringify(secrets, null, 2) + '\n', { mode: 0o600 });
  } catch (err) {
    throw unusable(err, 'write the development secrets to');
  }
  return { secrets, file, created: true };
}
