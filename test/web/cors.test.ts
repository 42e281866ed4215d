// CORS in a real browser: Debian's Chromium (playwright-core) on a page served from another origin (a tiny
// HTTP server on another port, as a host app embedding chat would be), calling Parley's API with fetch. With
// that origin in CHAT_CORS_ORIGINS, every method the API uses works, preflights included (PATCH, DELETE,
// PUT, JSON bodies, Authorization, X-Socket-ID), an upload and a download with its readable Content-Disposition
// too; from an origin not listed, the browser refuses, and the server never sees the refused writes. Neither
// may a page send the server key. Skipped only when /usr/bin/chromium is missing.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM} (apt-get install -y chromium): browser tests skipped`;

/** A host app's page: an empty document on its own origin. */
async function hostPage(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Host app</title><h1>Host app</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** What a page's fetch ended with: the status and JSON body, or the browser's refusal. */
type Outcome = { status: number; body: unknown; headers: Record<string, string | null> } | { refused: string };

describe('CORS in Chromium', { skip }, () => {
  let app: TestApp;
  let browser: Browser;
  let allowed: { server: Server; origin: string };
  let other: { server: Server; origin: string };
  let allowedPage: Page;
  let otherPage: Page;

  before(async () => {
    allowed = await hostPage();
    other = await hostPage();
    app = await startTestApp({ env: { CHAT_CORS_ORIGINS: allowed.origin, CHAT_RATE_HEARTBEATS_PER_MINUTE: '2' } });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    const open = async (origin: string): Promise<Page> => {
      const page = await (await browser.newContext()).newPage();
      page.setDefaultTimeout(6_000);
      await page.goto(origin);
      return page;
    };
    allowedPage = await open(allowed.origin);
    otherPage = await open(other.origin);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    allowed?.server.close();
    other?.server.close();
  });

  /** fetch from inside the page: a JSON body (or a FormData upload of `upload` text), the bearer token. */
  function call(page: Page, method: string, url: string, options: { token?: string; json?: unknown; upload?: string; headers?: Record<string, string> } = {}): Promise<Outcome> {
    return page.evaluate(
      async ({ method, url, options }) => {
        const headers: Record<string, string> = { ...(options.headers ?? {}) };
        if (options.token) headers.Authorization = `Bearer ${options.token}`;
        let body: BodyInit | undefined;
        if (options.json !== undefined) {
          headers['Content-Type'] = 'application/json';
          body = JSON.stringify(options.json);
        } else if (options.upload !== undefined) {
          const form = new FormData();
          form.append('file', new Blob([options.upload], { type: 'text/plain' }), 'notes.txt');
          body = form;
        }
        try {
          const response = await fetch(url, { method, headers, body });
          const text = await response.text();
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            /* not JSON */
          }
          // (No named functions in here: the test's compiler would wrap them in a helper the page does not have.)
          const seen = { 'content-disposition': response.headers.get('content-disposition'), 'retry-after': response.headers.get('retry-after') };
          return { status: response.status, body: parsed, headers: seen };
        } catch (err) {
          return { refused: String(err) };
        }
      },
      { method, url, options },
    );
  }

  /** The browser's own CORS refusal: fetch rejects with a TypeError, and the page learns nothing else. */
  function assertRefused(outcome: Outcome, what: string): void {
    assert.ok('refused' in outcome, `${what}: ${JSON.stringify(outcome)}`);
    assert.equal(outcome.refused, 'TypeError: Failed to fetch', what);
  }

  function answered(outcome: Outcome, status: number, what: string): { status: number; body: any; headers: Record<string, string | null> } {
    assert.ok(!('refused' in outcome), `${what}: refused by the browser (${'refused' in outcome ? outcome.refused : ''})`);
    assert.equal(outcome.status, status, `${what}: ${JSON.stringify(outcome.body)}`);
    return outcome as { status: number; body: any; headers: Record<string, string | null> };
  }

  test('a page on a listed origin sends, edits, deletes, blocks and unblocks, uploads and downloads', async () => {
    const [alice, bob] = [4101, 4102];
    const token = await app.token(alice, 'Alice');
    await app.request(bob, 'GET', '/blocks'); // Bob is known
    const api = app.api;

    const conversation = answered(await call(allowedPage, 'POST', `${api}/conversations`, { token, json: { user_id: bob } }), 201, 'POST /conversations');
    const id = conversation.body.data.id;
    const sent = answered(
      await call(allowedPage, 'POST', `${api}/conversations/${id}/messages`, { token, json: { body: 'from the host app' }, headers: { 'X-Socket-ID': '123.456', 'X-Request-Id': 'cors-1' } }),
      201,
      'send with X-Socket-ID',
    );
    const edited = answered(await call(allowedPage, 'PATCH', `${api}/messages/${sent.body.data.id}`, { token, json: { body: 'edited cross-origin' } }), 200, 'PATCH');
    assert.equal(edited.body.data.body, 'edited cross-origin');
    answered(await call(allowedPage, 'DELETE', `${api}/messages/${sent.body.data.id}`, { token }), 204, 'DELETE message');

    answered(await call(allowedPage, 'POST', `${api}/blocks`, { token, json: { user_id: bob } }), 200, 'block');
    const unblocked = answered(await call(allowedPage, 'DELETE', `${api}/blocks/${bob}`, { token }), 200, 'DELETE block (unblock)');
    assert.deepEqual(unblocked.body.data.messaging_blocked_user_ids, []);

    const uploaded = answered(await call(allowedPage, 'POST', `${api}/attachments`, { token, upload: 'cross-origin bytes' }), 201, 'upload');
    const file = answered(await call(allowedPage, 'GET', `${app.baseUrl}${uploaded.body.data.url}`, { token }), 200, 'download');
    assert.equal(file.body, 'cross-origin bytes');
    assert.equal(file.headers['content-disposition'], "inline; filename*=UTF-8''notes.txt", 'Content-Disposition is readable');

    // And the server agrees: the message is gone, the block too.
    const { body } = await app.request(alice, 'GET', `/conversations/${id}/messages`);
    assert.deepEqual(body.data, []);
  });

  test('a 429 from a listed origin lets the page read Retry-After', async () => {
    const user = 4103;
    const token = await app.token(user, 'Dana');
    let last: Outcome | undefined;
    // 2 heartbeats a minute here: the third is refused.
    for (let i = 0; i < 3; i++) last = await call(allowedPage, 'POST', `${app.api}/presence/heartbeat`, { token });
    const limited = answered(last!, 429, 'heartbeat over the limit');
    assert.match(limited.headers['retry-after'] ?? '', /^\d+$/);
  });

  test('a page on another origin is refused by the browser, and its writes never reach the server', async () => {
    const [alice, bob] = [4111, 4112];
    const token = await app.token(alice, 'Alice');
    await app.request(bob, 'GET', '/blocks');
    const { body: created } = await app.request(alice, 'POST', '/conversations', { user_id: bob });
    const { body: message } = await app.request(alice, 'POST', `/conversations/${created.data.id}/messages`, { body: 'original' });

    for (const [method, path, json] of [
      ['GET', '/conversations', undefined],
      ['PATCH', `/messages/${message.data.id}`, { body: 'hijacked' }],
      ['DELETE', `/messages/${message.data.id}`, undefined],
      ['POST', '/blocks', { user_id: bob }],
    ] as const) {
      assertRefused(await call(otherPage, method, `${app.api}${path}`, { token, json }), `${method} ${path} from another origin`);
    }
    const { body } = await app.request(alice, 'GET', `/conversations/${created.data.id}/messages`);
    assert.deepEqual(body.data.map((m: { body: string }) => m.body), ['original'], 'neither edited nor deleted');
    assert.deepEqual((await app.request(alice, 'GET', '/blocks')).body.messaging_blocked_user_ids, [], 'not blocked');
  });

  test('not even a listed origin may send the server key', async () => {
    const outcome = await call(allowedPage, 'PUT', `${app.api}/users/4120`, { json: { name: 'Mallory' }, headers: { 'X-Chat-Server-Key': app.config.serverKey } });
    assertRefused(outcome, 'PUT /users with X-Chat-Server-Key');
    assert.equal((await app.request(4121, 'POST', '/conversations', { user_id: 4120 })).status, 404, 'the user was not created');
  });
});
