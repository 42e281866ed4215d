// The SDK's types come from the server by generation, never by hand: packages/client/src/generated/ holds what
// scripts/client-types.ts writes now from docs/openapi.json (openapi-typescript) and src/contract.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CLIENT_GENERATED_DIR, clientTypeFiles } from '../../scripts/client-types.js';

describe('@parley/client: the generated types', () => {
  test('packages/client/src/generated/ is what `npm run client-types` writes (else run it and commit the result)', async () => {
    for (const [name, text] of Object.entries(await clientTypeFiles())) {
      assert.equal(readFileSync(join(CLIENT_GENERATED_DIR, name), 'utf8'), text, `${name} is stale: npm run client-types`);
    }
  });

  test('the generated files are types only: nothing of them reaches the compiled package', () => {
    for (const name of ['openapi.ts', 'contract.ts']) {
      const code = readFileSync(join(CLIENT_GENERATED_DIR, name), 'utf8').split('\n').filter((line) => /^export (?!interface |type )/.test(line));
      assert.deepEqual(code, [], name);
    }
  });

  test('every event of docs/events.md has a payload type under its broadcast name (what chat.on takes)', () => {
    const contract = readFileSync(join(CLIENT_GENERATED_DIR, 'contract.ts'), 'utf8');
    const broadcasts = [...contract.matchAll(/broadcastAs: '(\w+)'/g)].map((m) => m[1]).sort();
    const events = readFileSync(join(CLIENT_GENERATED_DIR, '../../../../docs/events.md'), 'utf8');
    const section = events.slice(events.indexOf('## The events one by one'), events.indexOf('## Chosen values'));
    const documented = [...section.matchAll(/^### (\w+)(.*)$/gm)].filter((m) => !m[2]!.includes('webhook only')).map((m) => m[1]).sort();
    assert.ok(documented.length >= 17, 'events.md read');
    assert.deepEqual(broadcasts, documented);
  });
});
