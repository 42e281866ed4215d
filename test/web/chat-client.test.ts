// The web client (web/) in a real browser: Debian's Chromium driven by playwright-core, against a real Parley
// (built-in Pusher sockets, PGlite) serving the Vite build at `/`. Two (sometimes three) users in separate
// browser contexts sign in with the demo sign-in (CHAT_DEMO=1) and use the chat the way people do: everything
// must arrive live, without a reload. Screenshots of the inbox and a conversation go to docs/screenshots/
// (when missing, or with UPDATE_SCREENSHOTS=1).
// Skipped only when /usr/bin/chromium is missing (`apt-get install chromium`; .ci/run installs it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';

const CHROMIUM = '/usr/bin/chromium';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SCREENSHOTS = join(ROOT, 'docs', 'screenshots');
const DESKTOP = { width: 1180, height: 760 };
const PHONE = { width: 390, height: 780 };
/** The docs' screenshots are written when missing or with UPDATE_SCREENSHOTS=1 (their clock times change on every run). */
const screenshotPath = (name: string): string | undefined =>
  process.env.UPDATE_SCREENSHOTS === '1' || !existsSync(join(SCREENSHOTS, name)) ? join(SCREENSHOTS, name) : undefined;
const skip = existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM} (apt-get install -y chromium): browser tests skipped`;

/** Builds web/ into web/dist with Vite, as `npm run build` does, so the test always runs the current client. */
function buildWebClient(): void {
  const vite = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  const result = spawnSync(process.execPath, [vite, 'build', 'web', '--logLevel', 'warn'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(result.status, 0, `vite build web failed:\n${result.stdout}\n${result.stderr}`);
  assert.ok(existsSync(join(ROOT, 'web', 'dist', 'index.html')), 'web/dist/index.html was built');
}

/** Every form control on the page has an accessible name (a <label> or aria-label). */
async function assertLabelled(page: Page): Promise<void> {
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll('input, textarea, select')]
      .filter((e) => !(e as HTMLInputElement).labels?.length && !e.getAttribute('aria-label'))
      .map((e) => e.outerHTML),
  );
  assert.deepEqual(unlabelled, [], 'unlabelled form controls');
}

/** Waits until a locator (first match) shows the text. */
async function seeText(locator: Locator, text: string | RegExp): Promise<void> {
  await locator.filter({ hasText: text }).first().waitFor({ state: 'visible' });
}

describe('web client in Chromium', { skip }, () => {
  let app: TestApp;
  let browser: Browser;
  const pages: Page[] = [];
  const pageErrors: string[] = [];
  const sockets = new Set<Socket>();
  /** While true, the server's WebSocket upgrades are refused (the pages cannot reconnect). */
  let refuseSockets = false;
  let alice: Page;
  let bob: Page;
  let directId = 0;
  let groupId = 0;

  async function openPage(viewport = DESKTOP): Promise<Page> {
    const context = await browser.newContext({ viewport, locale: 'en-GB', timezoneId: 'UTC', colorScheme: 'light' });
    const page = await context.newPage();
    page.setDefaultTimeout(6_000);
    page.on('pageerror', (err) => pageErrors.push(`${err.name}: ${err.message}`));
    page.on('console', (message) => {
      // Chromium logs failed requests and the WebSocket attempts the reconnect test refuses on purpose.
      if (message.type() === 'error' && !/Failed to load resource|^WebSocket connection to .* failed/.test(message.text())) pageErrors.push(message.text());
    });
    // Anything the page's Content-Security-Policy blocks is reported as a page error.
    await page.addInitScript(
      "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));",
    );
    pages.push(page);
    return page;
  }

  /** The demo sign-in, as a person would do it; resolves when the socket is live. */
  async function signIn(page: Page, userId: number, name: string): Promise<void> {
    const response = await page.goto(app.baseUrl);
    // The page comes with its Content-Security-Policy (scripts and styles of its own origin only), and its own
    // code works under it (any violation is a page error, checked at the end).
    const headers = response!.headers();
    assert.match(headers['content-security-policy'] ?? '', /script-src 'self';/);
    assert.match(headers['content-security-policy'] ?? '', /default-src 'self';/);
    assert.equal(headers['x-content-type-options'], 'nosniff');
    await page.getByLabel('User id').fill(String(userId));
    await page.getByLabel('Name').fill(name);
    await page.getByRole('button', { name: 'Sign in (demo)' }).click();
    await page.locator('.connection[data-state="connected"]').waitFor();
  }

  const item = (page: Page, title: string) => page.locator('.conversation-item').filter({ has: page.locator('.item-title', { hasText: title }) });
  const messages = (page: Page) => page.locator('#message-list .message');
  /** The message whose own text (not a reply quote) has this text. */
  const message = (page: Page, text: string) => messages(page).filter({ has: page.locator('.body', { hasText: text }) });

  before(async () => {
    buildWebClient();
    app = await startTestApp({ env: { CHAT_DEMO: '1' } });
    // Ahead of Parley's own upgrade handler: the test can drop every socket and hold off reconnections.
    app.app.http.server.prependListener('upgrade', (_request, socket: Socket) => {
      if (refuseSockets) return void socket.destroy();
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    mkdirSync(SCREENSHOTS, { recursive: true });
    // The users' names, for requests the test makes as them (a token's name claim renames its user).
    await app.token(1, 'Alice');
    await app.token(3, 'Carol');
  });

  after(async () => {
    await browser?.close();
    await app?.close();
  });

  test('the page signs in, offers the demo sign-in, and shows an empty inbox', async () => {
    bob = await openPage();
    alice = await openPage();
    await signIn(bob, 2, 'Bob');
    await signIn(alice, 1, 'Alice');
    await alice.locator('#inbox-empty').getByText('No conversations yet').waitFor();
    await seeText(alice.locator('.me-name'), 'Alice');
    await assertLabelled(alice);
  });

  test('two users exchange messages, see each other typing, the read receipt, and the unread badge clear', async () => {
    // Alice starts a direct conversation with Bob, found by name.
    await alice.getByRole('button', { name: 'New chat' }).click();
    await alice.getByLabel('Find a person').fill('bo');
    await alice.locator('#people-results').getByRole('button', { name: 'Bob' }).click();
    await seeText(alice.locator('#thread-title'), 'Bob');
    await assertLabelled(alice);
    directId = Number(await alice.locator('.thread').getAttribute('data-conversation-id'));
    assert.ok(directId > 0);

    // Bob's inbox gets it live (InboxUpdated), with Alice online (a heartbeat, then UserPresenceChanged/presence).
    await item(bob, 'Alice').waitFor();
    await item(bob, 'Alice').locator('.dot.online').waitFor();

    // Alice sends with Enter; Bob's inbox shows the last message and an unread badge.
    await alice.locator('#composer-input').fill('Hi Bob! Are you there?');
    await alice.locator('#composer-input').press('Enter');
    await seeText(messages(alice).locator('.body'), 'Hi Bob! Are you there?');
    assert.equal(await alice.locator('#composer-input').inputValue(), '', 'the composer is cleared after sending');
    await seeText(item(bob, 'Alice').locator('.item-preview'), 'Hi Bob! Are you there?');
    await seeText(item(bob, 'Alice').locator('.badge'), '1');

    // Bob opens it: the badge clears, and Alice sees the read receipt (ConversationRead).
    await item(bob, 'Alice').click();
    await seeText(messages(bob).locator('.body'), 'Hi Bob! Are you there?');
    await item(bob, 'Alice').locator('.badge').waitFor({ state: 'detached' });
    await seeText(alice.locator('.message.mine .receipt'), 'Seen');

    // Bob types: Alice sees it. He sends: she gets the message, and the indicator goes.
    await bob.locator('#composer-input').pressSequentially('Yes, hello Alice');
    await seeText(alice.locator('#typing-indicator'), 'Bob is typing…');
    await bob.locator('#composer-input').press('Enter');
    await seeText(messages(alice).locator('.body'), 'Yes, hello Alice');
    await alice.waitForFunction(() => document.getElementById('typing-indicator')?.textContent === '');
    // Alice has the conversation open and visible: no unread badge for her, and Bob sees his receipt.
    await item(alice, 'Bob').locator('.badge').waitFor({ state: 'detached' });
    await seeText(bob.locator('.message.mine .receipt'), 'Seen');

    // And the other way round.
    await alice.locator('#composer-input').pressSequentially('Great');
    await seeText(bob.locator('#typing-indicator'), 'Alice is typing…');
    await alice.locator('#composer-input').press('Enter');
    await seeText(messages(bob).locator('.body'), 'Great');
    // New messages are announced to screen readers.
    await bob.waitForFunction(() => document.getElementById('announcer')?.textContent === 'Alice: Great');
  });

  test('reply, edit, forward, delete and an image attachment reach the other page live', async () => {
    // Reply to Bob's message.
    await message(alice, 'Yes, hello Alice').hover();
    await message(alice, 'Yes, hello Alice').getByRole('button', { name: 'Reply message from Bob' }).click();
    await seeText(alice.locator('.composer-banner'), 'Replying to Bob');
    await alice.locator('#composer-input').fill('Nice to hear from you');
    await alice.locator('#composer-input').press('Enter');
    const reply = message(bob, 'Nice to hear from you');
    await seeText(reply.locator('.reply-quote'), 'Yes, hello Alice');

    // Edit it.
    await message(alice, 'Nice to hear from you').hover();
    await message(alice, 'Nice to hear from you').getByRole('button', { name: 'Edit message from Alice' }).click();
    assert.equal(await alice.locator('#composer-input').inputValue(), 'Nice to hear from you');
    await alice.locator('#composer-input').fill('Nice to hear from you! (ünïcödé ✓)');
    await alice.locator('#composer-input').press('Enter');
    await seeText(reply.locator('.body'), 'Nice to hear from you! (ünïcödé ✓)');
    await seeText(reply.locator('.edited'), 'edited');

    // An image, fetched with the token and shown through an object URL on both pages.
    const png = await alice.evaluate(() => {
      const canvas = document.createElement('canvas');
      canvas.width = 320;
      canvas.height = 180;
      const g = canvas.getContext('2d')!;
      const gradient = g.createLinearGradient(0, 0, 320, 180);
      gradient.addColorStop(0, '#3d5afe');
      gradient.addColorStop(1, '#00bfa5');
      g.fillStyle = gradient;
      g.fillRect(0, 0, 320, 180);
      g.fillStyle = '#fff';
      g.font = 'bold 44px sans-serif';
      g.fillText('Parley', 90, 105);
      return canvas.toDataURL('image/png').split(',')[1];
    });
    await alice.locator('#composer-file').setInputFiles({ name: 'parley.png', mimeType: 'image/png', buffer: Buffer.from(png, 'base64') });
    await seeText(alice.locator('.composer-banner'), 'parley.png');
    await alice.locator('#composer-input').fill('Our logo');
    await alice.locator('#composer-input').press('Enter');
    for (const page of [alice, bob]) {
      const image = message(page, 'Our logo').locator('img.attachment-image');
      await image.waitFor();
      await page.waitForFunction(
        (el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth === 320 && (el as HTMLImageElement).src.startsWith('blob:'),
        await image.elementHandle(),
      );
    }

    // Delete a message: gone from Bob's page.
    await alice.locator('#composer-input').fill('This one is a mistake');
    await alice.locator('#composer-input').press('Enter');
    await seeText(messages(bob).locator('.body'), 'This one is a mistake');
    await message(alice, 'This one is a mistake').hover();
    await message(alice, 'This one is a mistake').getByRole('button', { name: 'Delete message from Alice' }).click();
    await alice.locator('dialog[open]').getByRole('button', { name: 'Delete' }).click();
    await message(bob, 'This one is a mistake').waitFor({ state: 'detached' });
    await seeText(item(bob, 'Alice').locator('.item-preview'), 'Our logo');

    // Forward Bob's message into a group Alice and Carol share: it shows there as forwarded.
    const { body: group } = await app.request(3, 'POST', '/groups', { name: 'Book club', user_ids: [1] });
    await item(alice, 'Book club').waitFor();
    await message(alice, 'Yes, hello Alice').hover();
    await message(alice, 'Yes, hello Alice').getByRole('button', { name: 'Forward message from Bob' }).click();
    await alice.locator('dialog[open]').getByLabel('Book club').check();
    await alice.locator('dialog[open]').getByRole('button', { name: 'Forward' }).click();
    await seeText(item(alice, 'Book club').locator('.item-preview'), 'Yes, hello Alice');
    const { body: history } = await app.request(3, 'GET', `/conversations/${group.data.id}/messages`);
    assert.equal(history.data[0].forwarded_from.sender.id, 2);
  });

  test('a clear error from the API, and block / unblock take effect on the other page', async () => {
    await alice.getByRole('button', { name: 'New chat' }).click();
    await alice.getByLabel('Find a person').fill('!!!'); // no letter or digit: the API refuses the search (422)
    const error = alice.locator('dialog[open] .form-error');
    await error.waitFor();
    assert.match((await error.textContent()) ?? '', /\w+/, 'the API message is shown');
    await alice.keyboard.press('Escape');
    await alice.locator('dialog[open]').waitFor({ state: 'detached' });

    await bob.locator('#block-toggle').click();
    await bob.locator('dialog[open]').getByRole('button', { name: 'Block' }).click();
    await seeText(alice.locator('.blocked-note'), 'You can’t message Bob.');
    assert.equal(await alice.locator('#composer-input').isDisabled(), true);
    await seeText(bob.locator('.blocked-note'), 'You blocked Alice');
    await bob.locator('#block-toggle', { hasText: 'Unblock' }).click();
    await alice.locator('.blocked-note').waitFor({ state: 'hidden' });
    assert.equal(await alice.locator('#composer-input').isDisabled(), false);
  });

  test('groups: create, rename, add, change a role; a removed member’s page shows it', async () => {
    await alice.getByRole('button', { name: 'New group' }).click();
    await alice.getByLabel('Group name').fill('Team');
    await alice.getByLabel('Members', { exact: true }).fill('2');
    await alice.getByRole('button', { name: 'Create group' }).click();
    await seeText(alice.locator('#thread-title'), 'Team');
    groupId = Number(await alice.locator('.thread').getAttribute('data-conversation-id'));

    await item(bob, 'Team').click();
    await seeText(bob.locator('#thread-title'), 'Team');
    await alice.locator('#composer-input').fill('Welcome to the team');
    await alice.locator('#composer-input').press('Enter');
    await seeText(messages(bob).locator('.body'), 'Welcome to the team');

    await alice.getByRole('button', { name: 'Group settings' }).click();
    const dialog = alice.locator('dialog[open]');
    await dialog.getByLabel('Role of Bob').waitFor();
    await assertLabelled(alice);
    await dialog.getByLabel('Group name').fill('Core team');
    await dialog.getByRole('button', { name: 'Rename' }).click();
    await seeText(bob.locator('#thread-title'), 'Core team');
    await dialog.getByLabel('Add members', { exact: true }).fill('3');
    await dialog.getByRole('button', { name: 'Add', exact: true }).click();
    await seeText(bob.locator('.system-note'), 'Alice added Carol');
    await dialog.getByLabel('Role of Bob').selectOption('admin');
    await seeText(bob.locator('.system-note'), 'Bob is now an admin');

    await dialog.getByRole('button', { name: 'Remove Bob' }).click();
    await alice.locator('dialog[open]').getByRole('button', { name: 'Remove', exact: true }).click();
    await seeText(bob.locator('#thread-notice'), 'You were removed from “Core team”.');
    await item(bob, 'Core team').waitFor({ state: 'detached' });
    await dialog.locator('.member[data-user-id="2"]').waitFor({ state: 'detached' });
    await alice.keyboard.press('Escape');
    const { body } = await app.request(3, 'GET', `/conversations/${groupId}`);
    assert.deepEqual(body.data.participants_preview.map((p: { id: number }) => p.id).sort(), [1, 3]);
  });

  test('after a dropped connection the page reconnects and catches up with `after`', async () => {
    await item(bob, 'Alice').click();
    await seeText(bob.locator('#thread-title'), 'Alice');
    // The network goes away: the browsers are offline and the server drops every socket (and refuses new ones).
    refuseSockets = true;
    for (const page of [alice, bob]) await page.context().setOffline(true);
    for (const socket of sockets) socket.destroy();
    const { status } = await app.request(1, 'POST', `/conversations/${directId}/messages`, { body: 'Sent while you were away' });
    assert.equal(status, 201);
    await bob.locator('.connection[data-state="connected"]').waitFor({ state: 'detached' });
    assert.equal(await message(bob, 'Sent while you were away').count(), 0, 'no socket: the message did not arrive live');
    // It comes back: pusher-js reconnects on the browser's online event, and the page catches up over HTTP.
    refuseSockets = false;
    for (const page of [alice, bob]) await page.context().setOffline(false);
    await bob.locator('.connection[data-state="connected"]').waitFor();
    await seeText(messages(bob).locator('.body'), 'Sent while you were away');
    // And the socket is live again.
    await app.request(1, 'POST', `/conversations/${directId}/messages`, { body: 'And this one live' });
    await seeText(messages(bob).locator('.body'), 'And this one live');
  });

  test('history pages backwards with “Load older messages”', async () => {
    const { body } = await app.request(3, 'POST', '/conversations', { user_id: 1 });
    for (let i = 1; i <= 35; i++) await app.request(3, 'POST', `/conversations/${body.data.id}/messages`, { body: `Note ${i}` });
    await seeText(item(alice, 'Carol').locator('.badge'), '35');
    await item(alice, 'Carol').click();
    await seeText(messages(alice).last().locator('.body'), 'Note 35');
    assert.equal(await messages(alice).count(), 30, 'the newest page');
    await alice.getByRole('button', { name: 'Load older messages' }).click();
    await seeText(messages(alice).first().locator('.body'), 'Note 1');
    assert.equal(await messages(alice).count(), 35);
    await alice.getByRole('button', { name: 'Load older messages' }).waitFor({ state: 'hidden' });
    await item(alice, 'Carol').locator('.badge').waitFor({ state: 'detached' });
  });

  test('phone width: the inbox and a conversation are separate screens; screenshots for the docs', async () => {
    // A fuller inbox for the screenshot: people who write to Bob.
    for (const [id, name, text] of [
      [4, 'Dora Lindqvist', 'Lunch at 12:30?'],
      [5, 'Erik Sato', 'The build is green again'],
    ] as const) {
      await app.token(id, name);
      const { body } = await app.request(id, 'POST', '/conversations', { user_id: 2 });
      await app.request(id, 'POST', `/conversations/${body.data.id}/messages`, { body: text });
    }
    await app.request(3, 'POST', `/conversations/${groupId}/messages`, { body: 'Standup moved to 10:00' });
    await bob.locator('#composer-input').fill('See you at the review');
    await bob.locator('#composer-input').press('Enter');
    await seeText(item(alice, 'Bob').locator('.item-preview'), 'See you at the review');

    const phone = await openPage(PHONE);
    await signIn(phone, 2, 'Bob');
    await item(phone, 'Erik Sato').locator('.badge').waitFor();
    await item(phone, 'Alice').waitFor();
    assert.equal(await phone.locator('.thread-pane').isVisible(), false, 'the conversation pane is hidden on the inbox screen');
    await phone.mouse.move(0, PHONE.height - 1);
    await phone.screenshot({ path: screenshotPath('inbox.png') });
    await phone.emulateMedia({ colorScheme: 'dark' });
    await phone.screenshot({ path: screenshotPath('inbox-dark.png') });
    await phone.emulateMedia({ colorScheme: 'light' });

    await item(phone, 'Erik Sato').click();
    await seeText(phone.locator('#thread-title'), 'Erik Sato');
    assert.equal(await phone.locator('.sidebar').isVisible(), false, 'the inbox is hidden on the conversation screen');
    await phone.getByRole('button', { name: 'Back to conversations' }).first().click();
    await item(phone, 'Erik Sato').waitFor();
    await item(phone, 'Erik Sato').locator('.badge').waitFor({ state: 'detached' });

    // The conversation screenshot: Alice's desktop view. Bob (who has it open) replies to her image; her answer
    // shows his read receipt; then he types.
    await item(alice, 'Bob').click();
    await seeText(alice.locator('#thread-title'), 'Bob');
    await message(bob, 'Our logo').hover();
    await message(bob, 'Our logo').getByRole('button', { name: 'Reply message from Alice' }).click();
    await bob.locator('#composer-input').fill('Love the new logo! 😍');
    await bob.locator('#composer-input').press('Enter');
    await seeText(message(alice, 'Love the new logo!').locator('.reply-quote'), 'Our logo');
    // From the keyboard (the toolbar shows while the message has focus within): a click's pointer, moved onto
    // the toolbar above the bubble, could find the message no longer hovered after the list scrolled and hit
    // the bubble of the message above instead.
    await message(bob, 'Our logo').getByRole('button', { name: 'React to message from Alice' }).focus();
    await message(bob, 'Our logo').getByRole('button', { name: 'React to message from Alice' }).press('Enter');
    await bob.getByRole('button', { name: 'React with 🎉' }).click();
    await message(alice, 'Our logo').locator('.reaction').waitFor();
    await alice.locator('#composer-input').fill('Thanks! It ships with the next release.');
    await alice.locator('#composer-input').press('Enter');
    await seeText(message(alice, 'Thanks! It ships with the next release.').locator('.receipt'), 'Seen');
    await bob.locator('#composer-input').pressSequentially('One more thing');
    await seeText(alice.locator('#typing-indicator'), 'Bob is typing…');
    await alice.locator('img.attachment-image').last().evaluate((img) => (img as HTMLImageElement).decode());
    for (const dismiss of await alice.locator('.toast button').all()) await dismiss.click();
    await alice.mouse.move(0, DESKTOP.height - 1);
    await alice.locator('#composer-input').focus();
    await alice.screenshot({ path: screenshotPath('conversation.png') });
    await alice.emulateMedia({ colorScheme: 'dark' });
    await alice.screenshot({ path: screenshotPath('conversation-dark.png') });
    await alice.emulateMedia({ colorScheme: 'light' });
  });

  test('no errors in the pages', () => {
    assert.deepEqual(pageErrors, []);
  });
});

describe('demo sign-in is off by default', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app?.close();
  });

  test('client-config says so, and POST /demo/token does not exist', async () => {
    const config = await (await fetch(`${app.api}/client-config`)).json();
    assert.deepEqual(config, { app_key: 'test-app-key', ws_host: null, ws_port: null, force_tls: false, realtime: true, demo: false });
    const response = await fetch(`${app.api}/demo/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user_id: 1, name: 'Mallory' }) });
    assert.equal(response.status, 404);
    assert.equal((await response.json()).code, 'not_found');
  });
});
