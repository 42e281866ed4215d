// Writes the OpenAPI document of the HTTP API to docs/openapi.json.
//   npx tsx scripts/openapi.ts
// Builds the app on a throw-away embedded (PGlite) data directory, so it needs no database and touches no
// real data; the document is the same one the server serves at /api/chat/v1/openapi.json.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { createApp } from '../src/app/index.js';
import { loadConfig } from '../src/config/index.js';
import { SECRETS } from '../testkit/secrets.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const output = join(root, 'docs', 'openapi.json');
const dataDir = mkdtempSync(join(tmpdir(), 'parley-openapi-'));

try {
  const config = loadConfig({
    CHAT_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    ...SECRETS,
    LOG_LEVEL: 'silent',
  });
  const app = await createApp(config, pino({ level: 'silent' }));
  try {
    await app.http.ready();
    writeFileSync(output, JSON.stringify(app.http.swagger(), null, 2) + '\n');
    console.log(`wrote ${output}`);
  } finally {
    await app.close();
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
