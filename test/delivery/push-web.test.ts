// The web client's Web Push, in Chromium: an opt-in button and no permission prompt on load, the service
// worker (web/public/sw.js) registered by the button, showing a push as a notification per conversation
// (the push delivered to it through the DevTools protocol, as the browser's push service would), and the
// subscription removed on sign-out. Skipped when /usr/bin/chromium is missing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { ROOT } from '../../testkit/root.js';
import { until } from '../../testkit/wait.js';
import { startTestApp, type TestApp } from '../support/app.js';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM}: browser test skipped`;

describe('web client push', { skip }, () => {
  let app: TestApp;
  let browser: Browser;
  before(async () => {
    const vite = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
    const built = spawnSync(process.execPath, [vite, 'build', 'web', '--logLevel', 'warn'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    assert.ok(existsSync(join(ROOT, 'web', 'dist', 'sw.js')), 'sw.js is part of the build');
    app = await startTestApp({ env: { CHAT_DEMO: '1' } });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  });
  after(async () => {
    await browser?.close();
    await app?.close();
  });

  test('opt-in button, no prompt on load; the service worker shows a push per conversation', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(app.baseUrl);
    await page.getByLabel('User id').fill('7');
    await page.getByLabel('Name').fill('Gus');
    await page.getByRole('button', { name: 'Sign in (demo)' }).click();
    await page.locator('.connection[data-state="connected"]').waitFor();
    const button = page.locator('#push-toggle');
    await button.waitFor();
    assert.equal((await button.textContent())?.trim(), 'Enable notifications');
    assert.equal(await page.evaluate(() => Notification.permission), 'default', 'not asked on load');
    assert.equal(await page.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).length), 0, 'nothing registered before the click');

    await context.grantPermissions(['notifications'], { origin: app.baseUrl });
    const cdp = await context.newCDPSession(page);
    const registrationId = new Promise<string>((resolve) => {
      cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
        const r = registrations.find((x: { scopeURL: string; isDeleted: boolean }) => x.scopeURL.startsWith(app.baseUrl) && !x.isDeleted);
        if (r) resolve(r.registrationId);
      });
    });
    await cdp.send('ServiceWorker.enable');
    await button.click();
    const id = await registrationId;
    await page.evaluate(async () => void (await navigator.serviceWorker.ready));
    // Headless Chromium refuses a push subscription ("Registration failed - permission denied"): the button then
    // says so in one short line (the reason in its tooltip) instead of throwing; a full browser subscribes (POST
    // /push/subscriptions, tested in push.test.ts).
    await page.waitForFunction(() => !(document.getElementById('push-toggle') as HTMLButtonElement).disabled);
    const label = (await button.textContent())?.trim() ?? '';
    assert.ok(label === 'Notifications on' || label === 'Notifications failed' || label === 'Notifications blocked', label);

    for (const [message, body] of [[1, 'first'], [2, 'second']] as const) {
      const data = { type: 'MessageSent', conversation_id: 42, message_id: message, title: 'Alice', body, url: '/#/c/42' };
      await cdp.send('ServiceWorker.deliverPushMessage', { origin: app.baseUrl + '/', registrationId: id, data: JSON.stringify(data) });
    }
    // Polled from here: waitForFunction would take an async predicate's promise itself as truthy.
    const notifications = () =>
      page.evaluate(async () => {
        const list = await (await navigator.serviceWorker.ready).getNotifications();
        return list.map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data }));
      });
    let shown: Awaited<ReturnType<typeof notifications>> = [];
    await until(async () => (shown = await notifications()).some((n) => n.body === 'second'), 10_000, () => JSON.stringify(shown));
    assert.deepEqual(shown, [{ title: 'Alice', body: 'second', tag: 'conversation-42', data: { url: '/#/c/42', conversation_id: 42 } }], 'one notification per conversation, the latest');
    const sw = await fetch(`${app.baseUrl}/sw.js`);
    assert.equal(sw.headers.get('cache-control'), 'no-cache');
    assert.deepEqual(errors, []);
    await context.close();
  });
});

