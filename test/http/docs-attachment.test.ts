// The attachment object as the docs describe it: events carry the same AttachmentResource as HTTP answers
// (v1.1 added width, height and thumbnail_url), so docs/events.md must list every key the server sends.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { AttachmentResource } from '../../src/contract/resources.js';

const root = new URL('../../', import.meta.url);

test('docs/events.md lists exactly the keys of the attachment object that MessageSent and MessageUpdated carry', () => {
  const text = readFileSync(new URL('docs/events.md', root), 'utf8');
  const match = /`attachment` is `null` or `\{([^`]*)\}`/.exec(text);
  assert.ok(match, 'events.md describes the attachment object');
  const documented = [...match[1]!.matchAll(/"([a-z_]+)"/g)].map((m) => m[1]);
  assert.deepEqual(documented, Object.keys(AttachmentResource.properties));
});
