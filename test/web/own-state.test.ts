// Each user's own conversation state in the web client (docs/api.md "A user's own conversation state"), in Chromium
// against a real Parley, with Alice in two tabs: Pin conversation puts it first with a pin mark (and Mute follows
// too); Archive takes it out of the inbox (also when new messages arrive, also after a reload) and the sidebar's
// "Archived" list brings it back with Unarchive; "Delete for me" hides one message for her alone; Clear history
// empties it for her and takes it out of the inbox until a new message arrives. Her other tab follows each change live (ConversationStateChanged,
// MessageHidden); Bob keeps everything.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { item, message, seeText, skip, startHarness, type Harness } from './browser.js';

describe('web client: my own conversation state', { skip }, () => {
  let harness: Harness;
  /** Alice's two tabs, and Bob. */
  let a1: Page;
  let a2: Page;
  let bob: Page;
  let withBob: number;
  let withCarol: number;

  /** The inbox's titles in order (without the marks' hidden words: " (online)", " (pinned)"). */
  const titles = (page: Page) => page.locator('#inbox-list .item-title').evaluateAll((items) => items.map((i) => i.firstChild?.textContent ?? ''));
  const menu = async (page: Page, choice: string) => {
    await page.getByRole('button', { name: 'More actions' }).click();
    await page.getByRole('menuitem', { name: choice, exact: true }).click();
  };
  async function eventually(check: () => Promise<void>, timeout = 5_000): Promise<void> {
    const deadline = Date.now() + timeout;
    for (;;) {
      try {
        return await check();
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  before(async () => {
    harness = await startHarness();
    const app = harness.app;
    for (const [id, name] of [[1, 'Alice'], [2, 'Bob'], [3, 'Carol']] as const) {
      await app.token(id, name);
      await app.request(id, 'GET', '/conversations');
    }
    withBob = (await app.request(1, 'POST', '/conversations', { user_id: 2 })).body.data.id;
    await app.request(2, 'POST', `/conversations/${withBob}/messages`, { body: 'Hi Alice' });
    await app.request(2, 'POST', `/conversations/${withBob}/messages`, { body: 'Oops, wrong chat' });
    withCarol = (await app.request(1, 'POST', '/conversations', { user_id: 3 })).body.data.id;
    await app.request(3, 'POST', `/conversations/${withCarol}/messages`, { body: 'Hello from Carol' });
    a1 = await harness.openPage();
    a2 = await harness.openPage();
    bob = await harness.openPage();
    await harness.signIn(a1, 1, 'Alice');
    await harness.signIn(a2, 1, 'Alice');
    await harness.signIn(bob, 2, 'Bob');
    await item(bob, 'Alice').click();
    await message(bob, 'Oops, wrong chat').waitFor();
  });

  after(async () => {
    await harness?.close();
  });

  test('Pin conversation puts it first with a pin mark, in both tabs, and it stays first; Mute reaches the other tab too', async () => {
    assert.deepEqual(await titles(a1), ['Carol', 'Bob']);
    await item(a1, 'Bob').click();
    await menu(a1, 'Pin conversation');
    for (const page of [a1, a2]) {
      await item(page, 'Bob').locator('.pin-mark').waitFor();
      await eventually(async () => assert.deepEqual(await titles(page), ['Bob', 'Carol']));
    }
    await harness.app.request(3, 'POST', `/conversations/${withCarol}/messages`, { body: 'Still me' });
    await seeText(item(a2, 'Carol').locator('.item-preview'), 'Still me');
    assert.deepEqual(await titles(a2), ['Bob', 'Carol']);
    await a1.getByRole('button', { name: 'More actions' }).click();
    await a1.getByRole('menuitem', { name: 'Unpin conversation' }).waitFor();
    await a1.keyboard.press('Escape');
    await a1.getByRole('menu').waitFor({ state: 'hidden' });
    // Mute too reaches the other tab (ConversationStateChanged), and Unmute.
    await a1.locator('#mute-toggle').click();
    await item(a2, 'Bob').locator('.muted-mark:not(.pin-mark)').waitFor();
    await seeText(a1.locator('#mute-toggle'), 'Unmute');
    await a1.locator('#mute-toggle').click();
    await item(a2, 'Bob').locator('.muted-mark:not(.pin-mark)').waitFor({ state: 'detached' });
    assert.deepEqual(harness.pageErrors, []);
  });

  test('Archive takes it out of both inboxes, also when messages arrive and after a reload; "Archived" brings it back', async () => {
    await item(a1, 'Carol').click();
    await menu(a1, 'Archive');
    for (const page of [a1, a2]) await item(page, 'Carol').waitFor({ state: 'detached' });
    const { body } = await harness.app.request(1, 'GET', '/conversations');
    assert.deepEqual(body.data.map((c: { id: number }) => c.id), [withBob]);

    await harness.app.request(3, 'POST', `/conversations/${withCarol}/messages`, { body: 'Anyone?' });
    await a2.reload();
    await item(a2, 'Bob').waitFor();
    await harness.app.request(3, 'POST', `/conversations/${withCarol}/messages`, { body: 'Hello?' });
    await harness.app.request(2, 'POST', `/conversations/${withBob}/messages`, { body: 'Ping' });
    await seeText(item(a2, 'Bob').locator('.item-preview'), 'Ping');
    await new Promise((resolve) => setTimeout(resolve, 300)); // the conversation's own state asked for, if it were
    assert.deepEqual(await titles(a2), ['Bob']);
    assert.deepEqual(await titles(a1), ['Bob']);

    await a2.getByRole('button', { name: 'Archived' }).click();
    await a2.getByRole('button', { name: 'Unarchive Carol' }).click();
    await a2.getByRole('button', { name: 'Unarchive Carol' }).waitFor({ state: 'detached' });
    await a2.getByRole('button', { name: 'Back to inbox' }).click();
    for (const page of [a2, a1]) await eventually(async () => assert.deepEqual(await titles(page), ['Bob', 'Carol']));
    assert.deepEqual(harness.pageErrors, []);
  });

  test('"Delete for me" hides a message in both tabs, never for Bob', async () => {
    await item(a1, 'Bob').click();
    await item(a2, 'Bob').click();
    await message(a2, 'Oops, wrong chat').waitFor();
    await message(a1, 'Oops, wrong chat').hover();
    await message(a1, 'Oops, wrong chat').getByRole('button', { name: 'Delete for me message from Bob' }).click();
    await a1.locator('dialog[open]').getByRole('button', { name: 'Delete for me' }).click();
    for (const page of [a1, a2]) await message(page, 'Oops, wrong chat').waitFor({ state: 'detached' });
    assert.equal(await message(bob, 'Oops, wrong chat').count(), 1);
    // The newest one hidden: the inbox of both tabs shows the one before (the live InboxUpdated still names it).
    await harness.app.request(2, 'POST', `/conversations/${withBob}/messages`, { body: 'Last one' });
    await seeText(item(a2, 'Bob').locator('.item-preview'), 'Last one');
    await message(a1, 'Last one').hover();
    await message(a1, 'Last one').getByRole('button', { name: 'Delete for me message from Bob' }).click();
    await a1.locator('dialog[open]').getByRole('button', { name: 'Delete for me' }).click();
    for (const page of [a1, a2]) {
      await message(page, 'Last one').waitFor({ state: 'detached' });
      await seeText(item(page, 'Bob').locator('.item-preview'), 'Ping');
    }
    const mine = await harness.app.request(1, 'GET', `/conversations/${withBob}/messages`);
    const his = await harness.app.request(2, 'GET', `/conversations/${withBob}/messages`);
    assert.deepEqual(mine.body.data.map((m: { body: string }) => m.body), ['Ping', 'Hi Alice']);
    assert.deepEqual(his.body.data.map((m: { body: string }) => m.body), ['Last one', 'Ping', 'Oops, wrong chat', 'Hi Alice']);
    assert.deepEqual(harness.pageErrors, []);
  });

  test('Clear history empties it for Alice in both tabs and takes it out of the inbox until Bob writes again', async () => {
    await menu(a1, 'Clear history');
    await a1.locator('dialog[open]').getByRole('button', { name: 'Clear history' }).click();
    for (const page of [a1, a2]) {
      await message(page, 'Hi Alice').waitFor({ state: 'detached' });
      await item(page, 'Bob').waitFor({ state: 'detached' });
    }
    assert.equal(await message(bob, 'Hi Alice').count(), 1, 'Bob keeps it');

    await harness.app.request(2, 'POST', `/conversations/${withBob}/messages`, { body: 'Are you there?' });
    for (const page of [a1, a2]) {
      await item(page, 'Bob').waitFor();
      await message(page, 'Are you there?').waitFor();
      assert.deepEqual(await page.locator('#message-list .message .body').allTextContents(), ['Are you there?']);
    }
    await a1.reload();
    await item(a1, 'Bob').click();
    await message(a1, 'Are you there?').waitFor();
    assert.equal(await message(a1, 'Hi Alice').count(), 0);
    assert.deepEqual(harness.pageErrors, []);
  });

  test('at phone width a group\'s header keeps its title and member count beside Mute, Group settings and More actions', async () => {
    const { body } = await harness.app.request(1, 'POST', '/groups', { name: 'Weekend plans', user_ids: [2, 3] });
    await a1.setViewportSize({ width: 375, height: 740 });
    await a1.goto(`${harness.app.baseUrl}/#/c/${body.data.id}`);
    await a1.locator('#thread-title', { hasText: 'Weekend plans' }).waitFor();
    const fits = await a1.evaluate(() => {
      const title = document.querySelector('#thread-title')!;
      const subtitle = document.querySelector('#thread-subtitle')!;
      const probe = document.createElement('span');
      probe.textContent = '3 members';
      probe.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap;font:inherit';
      subtitle.append(probe);
      const needed = probe.getBoundingClientRect().width;
      probe.remove();
      return { title: title.scrollWidth <= title.clientWidth, subtitle: subtitle.clientWidth >= needed, page: document.documentElement.scrollWidth <= 375 };
    });
    assert.deepEqual(fits, { title: true, subtitle: true, page: true });
    await a1.getByRole('button', { name: 'More actions' }).click();
    const menuBox = await a1.getByRole('menu').boundingBox();
    assert.ok(menuBox && menuBox.x >= 0 && menuBox.x + menuBox.width <= 375, JSON.stringify(menuBox));
    await a1.setViewportSize({ width: 1180, height: 760 });
    assert.deepEqual(harness.pageErrors, []);
  });
});
