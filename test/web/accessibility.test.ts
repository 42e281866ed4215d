// Accessibility: every screen of the web client, scanned with axe-core in the browser, light and dark, at desktop
// and phone width, has no serious or critical violation. The screens: sign-in, the empty inbox, each dialog, a
// direct conversation (reply, reaction, receipt, deleted message, a message's toolbar, the composer's reply
// banner), a group with its notices and settings, search results, the confirm dialog, a thread panel, the pinned
// bar and its list, the conversation's "More actions" menu, the sidebar's Threads and Archived lists.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { item, message, seeText, skip, startHarness, type Harness } from './browser.js';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/** Runs axe-core on the page as it is now; the serious and critical violations, one line each. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol rather than a <script> element: the page's CSP allows no inline
  // script, and the scan must not weaken it.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: unknown[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations as Violation[];
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id} (${v.help}): ${v.nodes.map((n) => `${n.target.join(' ')} — ${n.failureSummary ?? ''}`).join(' | ')}`);
}

describe('web client: accessibility of every screen (axe-core)', { skip }, () => {
  let harness: Harness;
  let alice: Page;
  let bob: Page;
  /** The screens scanned so far, and what was found on them (each test asserts its own are clean). */
  const scanned: string[] = [];
  let found: string[] = [];

  /** Scans the page in light and dark (the colour scheme is the system's). */
  async function scan(page: Page, screen: string): Promise<void> {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      for (const violation of await seriousViolations(page)) found.push(`${screen}, ${colorScheme}: ${violation}`);
      scanned.push(`${screen} (${colorScheme})`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }

  afterEach(() => {
    const violations = found;
    found = [];
    assert.deepEqual(violations, [], 'serious or critical violations');
  });

  async function say(page: Page, text: string): Promise<void> {
    await page.locator('#composer-input').fill(text);
    await page.locator('#composer-input').press('Enter');
    await message(page, text).waitFor();
  }

  before(async () => {
    harness = await startHarness();
    await harness.app.token(1, 'Alice');
    await harness.app.token(2, 'Bob');
    await harness.app.token(3, 'Carol');
    alice = await harness.openPage();
    bob = await harness.openPage();
  });

  after(async () => {
    await harness?.close();
    assert.deepEqual(harness?.pageErrors ?? [], [], 'page errors or CSP violations');
  });

  test('the sign-in screen', async () => {
    await alice.goto(harness.app.baseUrl);
    await alice.getByLabel('User id').waitFor();
    await scan(alice, 'sign-in');
  });

  test('the empty inbox and the dialogs opened from it', async () => {
    await harness.signIn(alice, 1, 'Alice');
    await seeText(alice.locator('#inbox-empty'), 'No conversations yet');
    await scan(alice, 'empty inbox');
    for (const button of ['New chat', 'New group', 'Blocked']) {
      await alice.getByRole('button', { name: button, exact: true }).click();
      const dialog = alice.getByRole('dialog');
      await dialog.waitFor();
      await scan(alice, `${button} dialog`);
      await alice.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
    }
  });

  test('a direct conversation: messages, a reply, a reaction, a receipt, a deleted message, the toolbar and the reply banner', async () => {
    await harness.signIn(bob, 2, 'Bob');
    await harness.app.request(1, 'POST', '/conversations', { user_id: 2 });
    await item(alice, 'Bob').click();
    await item(bob, 'Alice').click();
    await say(alice, 'Morning! Did the slides go out? 🎉');
    await say(bob, 'They did, an hour ago.');
    await say(alice, 'This one will be deleted');
    const doomed = await message(alice, 'This one will be deleted').getAttribute('data-id');
    assert.equal((await harness.app.request(1, 'DELETE', `/messages/${doomed}`)).status, 204);
    await seeText(bob.locator(`#message-${doomed}`), 'Alice deleted this message');
    await message(bob, 'Morning!').hover();
    await bob.getByRole('button', { name: 'React to message from Alice' }).first().click();
    await bob.getByRole('button', { name: 'React with 👍' }).click();
    await bob.locator('.reaction').first().waitFor();
    await message(bob, 'Morning!').hover();
    await message(bob, 'Morning!').getByRole('button', { name: 'Reply message from Alice' }).click();
    await seeText(bob.locator('.composer-banner'), 'Replying to');
    await seeText(alice.locator('.receipt'), 'Seen');
    await scan(bob, 'direct conversation with a reply banner');
    await message(alice, 'They did').focus(); // its toolbar shows on focus, fading in
    await alice.waitForFunction(() => [...document.querySelectorAll('.message:focus .actions')].every((bar) => getComputedStyle(bar).opacity === '1'));
    await scan(alice, 'direct conversation with a message toolbar');
  });

  test('the forward and delete dialogs', async () => {
    await message(alice, 'Morning!').hover();
    await message(alice, 'Morning!').getByRole('button', { name: 'Forward message from Alice' }).click();
    await alice.getByRole('dialog').waitFor();
    await scan(alice, 'forward dialog');
    await alice.keyboard.press('Escape');
    await message(alice, 'Morning!').hover();
    await message(alice, 'Morning!').getByRole('button', { name: 'Delete message from Alice' }).click();
    await alice.getByRole('dialog').waitFor();
    await scan(alice, 'delete confirmation');
    await alice.getByRole('button', { name: 'Cancel' }).click();
    await alice.getByRole('dialog').waitFor({ state: 'detached' });
  });

  test('a group with its notices, and its settings', async () => {
    const { body } = await harness.app.request(1, 'POST', '/groups', { name: 'Release crew', user_ids: [2] });
    await item(alice, 'Release crew').click();
    await alice.locator('#thread-title', { hasText: 'Release crew' }).waitFor();
    await harness.app.request(3, 'GET', '/conversations'); // Carol is known once she has used the API
    const added = await harness.app.request(1, 'POST', `/groups/${body.data.id}/participants`, { user_ids: [3] });
    assert.equal(added.status, 200, JSON.stringify(added.body));
    await seeText(alice.locator('.system-note'), /added Carol/);
    await say(alice, 'Welcome, Carol');
    await scan(alice, 'group conversation');
    await alice.getByRole('button', { name: 'Group settings' }).click();
    await alice.getByRole('dialog').waitFor();
    await scan(alice, 'group settings');
    await alice.keyboard.press('Escape');
  });

  test('search results', async () => {
    await alice.getByLabel('Search messages').fill('slides');
    await alice.getByLabel('Search messages').press('Enter');
    await alice.locator('.search-result').first().waitFor();
    await scan(alice, 'search results');
    await alice.getByRole('button', { name: 'Close search' }).click();
  });

  test('a thread panel, the pinned bar and its list, the "More actions" menu, the Threads and Archived lists', async () => {
    await item(alice, 'Release crew').click();
    await message(alice, 'Welcome, Carol').hover();
    await message(alice, 'Welcome, Carol').getByRole('button', { name: 'Pin message from Alice', exact: true }).click();
    await seeText(alice.locator('#pin-bar'), '1 pinned');
    await alice.locator('#pin-bar').click();
    await alice.getByRole('dialog').waitFor();
    await scan(alice, 'pinned messages dialog');
    await alice.keyboard.press('Escape');
    await alice.getByRole('dialog').waitFor({ state: 'detached' });
    await message(alice, 'Welcome, Carol').hover();
    await message(alice, 'Welcome, Carol').getByRole('button', { name: 'Reply in thread message from Alice' }).click();
    await alice.locator('#thread-input').fill('Glad to have you here');
    await alice.locator('#thread-input').press('Enter');
    await alice.locator('#reply-list .message:not(.pending)', { hasText: 'Glad to have you here' }).waitFor();
    await message(alice, 'Welcome, Carol').locator('.thread-line').waitFor();
    await scan(alice, 'thread panel beside a group with a pinned bar');
    await alice.getByRole('button', { name: 'Close thread' }).click();
    await alice.getByRole('button', { name: 'More actions' }).click();
    await alice.getByRole('menu').waitFor();
    await scan(alice, 'the conversation\'s "More actions" menu');
    await alice.keyboard.press('Escape');
    for (const list of ['Threads', 'Archived']) {
      await alice.getByRole('button', { name: list, exact: true }).click();
      await alice.locator('#side-panel .hint:not(:has-text("Loading"))').waitFor({ state: 'attached' });
      await scan(alice, `the ${list} list`);
      await alice.getByRole('button', { name: 'Back to inbox' }).click();
    }
  });

  test('phone width: the inbox and a conversation', async () => {
    await bob.setViewportSize({ width: 375, height: 740 });
    await bob.getByRole('button', { name: 'Back to conversations' }).click();
    await item(bob, 'Release crew').waitFor();
    await scan(bob, 'inbox at phone width');
    await item(bob, 'Release crew').click();
    await message(bob, 'Welcome, Carol').waitFor();
    await scan(bob, 'group conversation at phone width');
    assert.ok(scanned.length >= 26, `every screen scanned in both schemes: ${scanned.join(', ')}`);
  });
});
