// Process entry: configuration, the app, listening, graceful shutdown.
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { loadDevSecrets } from './config/dev-secrets.js';
import { createTokenIssuer } from './http/auth.js';
import { createLogger } from './logger.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env, loadDevSecrets(process.env)?.secrets);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  const app = await createApp(config, logger);
  const port = await app.listen();
  const { appKey } = config.broadcast;
  logger.info({ port, database: app.database.kind, broadcast: config.broadcast.driver }, 'Parley is listening');

  if (!config.databaseUrl) {
    // The embedded default: say how to try it without reading any docs.
    const example = await createTokenIssuer(config.jwtSecret).issue(1, { name: 'Alice' });
    console.log(
      [
        '',
        `Parley is running at http://localhost:${port} (embedded database in ${config.dataDir}).`,
        `  Web client: http://localhost:${port}/  (paste a token to sign in)`,
        `  API:        http://localhost:${port}/api/chat/v1  (OpenAPI: /api/chat/v1/openapi.json)`,
        config.pusher
          ? `  WebSocket:  the external Pusher server ${config.pusher.client.tls ? 'wss' : 'ws'}://${config.pusher.client.host}:${config.pusher.client.port} (key ${config.pusher.key})`
          : `  WebSocket:  ws://localhost:${port}/app/${appKey}  (Pusher protocol; key ${appKey})`,
        `  A token for user 1 (Alice), valid 24 h:`,
        `    ${example.token}`,
        `  More tokens: npm run token -- <userId> --name <name>`,
        '',
      ].join('\n'),
    );
  }

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
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
