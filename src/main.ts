// Process entry: configuration (with the development secrets of the embedded default), the app, listening, the
// banner, graceful shutdown. A start that fails prints one line saying what is wrong and how to fix it, and
// exits with 2 for a configuration error or 1 for anything else (startup-errors.ts).
import { createApp, type App } from './app/index.js';
import { loadConfig, type Config } from './config/index.js';
import { devSecretsFile, loadDevSecrets } from './config/dev-secrets.js';
import { createTokenIssuer } from './http/auth.js';
import { createLogger } from './logger.js';
import { describeStartupFailure } from './startup-errors.js';

/** How people reach a server bound to host: "localhost" for the wildcard addresses. */
function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

/** Printed on every start: where the API, the web client and the socket are; a token on the embedded default with development secrets. */
async function banner(config: Config, app: App, port: number): Promise<string> {
  const base = `http://${reachableHost(config.host)}:${port}`;
  const database = config.databaseUrl
    ? (() => {
        const url = new URL(config.databaseUrl);
        return `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`;
      })()
    : `embedded database in ${config.dataDir}`;
  const { appKey } = config.broadcast;
  const socket = config.pusher
    ? `the external Pusher server ${config.pusher.client.tls ? 'wss' : 'ws'}://${config.pusher.client.host}:${config.pusher.client.port} (key ${config.pusher.key})`
    : config.broadcast.driver === 'log'
      ? 'none (BROADCAST_DRIVER=log: events are only logged)'
      : `${base.replace('http:', 'ws:')}/app/${appKey}  (Pusher protocol; key ${appKey})`;
  const lines = [
    '',
    `Parley is running at ${base} (${database}, ${app.redis ? { single: 'Redis', cluster: 'Redis Cluster', sentinel: 'Redis through Sentinel' }[app.redis.kind] : 'one node'}).`,
    `  Web client: ${base}/  (${config.demo ? 'CHAT_DEMO is on: sign in with any user id and name' : 'paste a token to sign in'})`,
    `  API:        ${base}/api/chat/v1  (OpenAPI: /api/chat/v1/openapi.json)`,
    `  WebSocket:  ${socket}`,
  ];
  if (config.devSecrets && config.databaseUrl) {
    // PostgreSQL with generated secrets: a shared setup in the making, so no token on the screen, only the way to mint one.
    lines.push(`  Development secrets in ${devSecretsFile(process.env)}; set them for production (docs/deployment.md).`);
    lines.push(`  Tokens: npm run token -- <userId> --name <name>`);
  } else if (config.devSecrets) {
    // The embedded default: say how to try it without reading any docs.
    const example = await createTokenIssuer(config.jwtSecret, config.jwt).issue(1, { name: 'Alice' });
    const hours = Math.round((example.expiresAt.getTime() - Date.now()) / 3_600_000);
    lines.push(
      `  A token for user 1 (Alice), valid ${hours} h:`,
      `    ${example.token}`,
      `  More tokens: npm run token -- <userId> --name <name>`,
    );
  }
  lines.push('');
  return lines.join('\n');
}

async function main(): Promise<void> {
  let config: Config | undefined;
  try {
    config = loadConfig(process.env, loadDevSecrets(process.env)?.secrets);
    const logger = createLogger(config.logLevel);
    const app = await createApp(config, logger);
    const port = await app.listen();
    logger.info({ port, database: app.database.kind, broadcast: config.broadcast.driver }, 'Parley is listening');
    console.log(await banner(config, app, port));

    let closing = false;
    const shutdown = (signal: string) => {
      if (closing) return;
      closing = true;
      logger.info({ signal }, 'shutting down');
      app.close().then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', () => shutdown('SIGTERM'));
    process.on('SIGINT', () => shutdown('SIGINT'));
  } catch (err) {
    const debug = config?.logLevel === 'debug' || config?.logLevel === 'trace';
    const { text, exitCode } = describeStartupFailure(err, debug);
    console.error(text);
    process.exit(exitCode);
  }
}

void main();
