// BROADCAST_APPS_FILE: further Pusher apps served by the built-in server beside the default one
// (BROADCAST_APP_*), as Soketi serves several. The file is a JSON array of
// {id, key, secret, webhook_urls?, client_events?, max_connections?}; every mistake in it stops the start
// with one line naming the app and the field.
import { readFileSync } from 'node:fs';
import { ConfigError, SECRET_MIN_BYTES } from './settings.js';

/** One further app: its own channels, presence, HTTP API credentials, limits and webhooks. */
export interface PusherAppConfig {
  readonly id: string;
  readonly key: string;
  readonly secret: string;
  readonly webhookUrls: readonly string[];
  readonly clientEvents: boolean;
  readonly maxConnections: number;
}

/** What an app leaves out is the default app's (BROADCAST_CLIENT_EVENTS, BROADCAST_MAX_CONNECTIONS). */
export interface AppDefaults {
  readonly id: string;
  readonly key: string;
  readonly clientEvents: boolean;
  readonly maxConnections: number;
}

const FIELDS = new Set(['id', 'key', 'secret', 'webhook_urls', 'client_events', 'max_connections']);
/** Ids and keys appear in URLs (/apps/{id}/events, /app/{key}): no slashes, spaces or query characters. */
const NAME = /^[A-Za-z0-9._~-]{1,100}$/;

export function loadPusherApps(path: string, defaults: AppDefaults): readonly PusherAppConfig[] {
  const fail = (what: string, fix: string): never => {
    throw new ConfigError(`BROADCAST_APPS_FILE ${path}: ${what}. Fix: ${fix}.`);
  };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return fail(`cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, 'point it at a readable JSON file, or unset it');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return fail(`is not valid JSON (${(err as Error).message})`, 'write a JSON array of apps');
  }
  if (!Array.isArray(parsed)) return fail('must be a JSON array of apps', 'write [{"id": "2", "key": "...", "secret": "..."}]');

  const ids = new Set([defaults.id]);
  const keys = new Set([defaults.key]);
  return Object.freeze(
    parsed.map((entry: unknown, i): PusherAppConfig => {
      const at = `app ${i + 1}`;
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return fail(`${at} is not a JSON object`, 'write each app as {"id", "key", "secret"}');
      const app = entry as Record<string, unknown>;
      const unknown = Object.keys(app).filter((field) => !FIELDS.has(field));
      if (unknown.length > 0) return fail(`${at} has unknown field "${unknown[0]}"`, `use only ${[...FIELDS].join(', ')}`);

      const id = typeof app.id === 'number' && Number.isSafeInteger(app.id) ? String(app.id) : app.id;
      if (typeof id !== 'string' || !NAME.test(id)) return fail(`${at}: id must be 1 to 100 letters, digits or . _ ~ -`, 'give the app an id such as "2"');
      const named = `app "${id}"`;
      if (ids.has(id)) return fail(`${named}: the id is used twice (or is BROADCAST_APP_ID)`, 'give each app its own id');
      ids.add(id);
      if (typeof app.key !== 'string' || !NAME.test(app.key)) return fail(`${named}: key must be 1 to 100 letters, digits or . _ ~ -`, 'give it a key such as a random hex string');
      if (keys.has(app.key)) return fail(`${named}: the key is used twice (or is BROADCAST_APP_KEY)`, 'give each app its own key');
      keys.add(app.key);
      // As for BROADCAST_APP_SECRET: a secret that can be guessed signs nothing.
      if (typeof app.secret !== 'string' || Buffer.byteLength(app.secret) < SECRET_MIN_BYTES) {
        return fail(`${named}: secret must be a string of at least ${SECRET_MIN_BYTES} bytes`, 'use a random secret, e.g. openssl rand -hex 32');
      }

      const webhookUrls = app.webhook_urls ?? [];
      if (!Array.isArray(webhookUrls) || !webhookUrls.every(isHttpUrl)) {
        return fail(`${named}: webhook_urls must be an array of http(s) URLs`, 'write ["https://app.example/pusher/webhook"], or leave it out');
      }
      const clientEvents = app.client_events ?? defaults.clientEvents;
      if (typeof clientEvents !== 'boolean') return fail(`${named}: client_events must be true or false`, 'write true, false, or leave it out');
      const maxConnections = app.max_connections ?? defaults.maxConnections;
      if (typeof maxConnections !== 'number' || !Number.isSafeInteger(maxConnections) || maxConnections < 1) {
        return fail(`${named}: max_connections must be an integer ≥ 1`, 'write a number of sockets per node, or leave it out');
      }
      return Object.freeze({ id, key: app.key, secret: app.secret, webhookUrls: Object.freeze([...webhookUrls]), clientEvents, maxConnections });
    }),
  );
}

function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
