// What a first-time user trips over, in Chromium: the inbox at phone width with a long preview stays within the
// screen; "Seen by" drops a member removed by this very tab, and never names a member added later who has not
// opened the group; a reply's quote follows an edit or a delete of the message it quotes, live; the inbox puts a
// conversation whose newest message was deleted back where its newest visible message belongs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { item, message, openDirectPair, seeText, skip, startHarness, type Harness } from './browser.js';

describe('web client: first steps', { skip }, () => {
  let harness: Harness;
  let alice: Page;
  let bob: Page;
  let directId = 0;

  before(async () => {
    harness = await startHarness();
    ({ alice, bob, conversationId: directId } = await openDirectPair(harness));
    await harness.app.token(3, 'Carol');
    await harness.app.token(4, 'Dave');
    await harness.app.request(3, 'GET', '/conversations');
    await harness.app.request(4, 'GET', '/conversations');
  });

  after(async () => {
    await harness?.close();
  });

  const api = (userId: number, method: string, path: string, body?: unknown) => harness.app.request(userId, method, path, body);

  test('phone width: a long last message does not widen the inbox; Blocked, search, time and badge stay on screen', async () => {
    const page = await harness.openPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await harness.signIn(page, 5, 'Erin');
    const { body } = await api(2, 'POST', '/conversations', { user_id: 5 });
    await api(2, 'POST', `/conversations/${body.data.id}/messages`, { body: 'A very long first message that goes on and on '.repeat(8) });
    await item(page, 'Bob').locator('.badge').waitFor();
    const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, body: document.body.scrollWidth, view: window.innerWidth }));
    assert.equal(widths.page, 390, `the page is ${widths.page} px wide`);
    const inView = async (selector: string) =>
      page.locator(selector).first().evaluate((el) => {
        const r = el.getBoundingClientRect();
        return r.left >= 0 && r.right <= window.innerWidth;
      });
    for (const [what, locator] of [
      ['Blocked', page.getByRole('button', { name: /Blocked/ })],
      ['the search box', page.locator('.search-form input')],
      ['the time', item(page, 'Bob').locator('time')],
      ['the unread badge', item(page, 'Bob').locator('.badge')],
    ] as const) {
      const box = await locator.first().boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `${what} is on screen: ${JSON.stringify(box)}`);
    }
    assert.ok(await inView('.item-preview'));
    await page.context().close();
    assert.deepEqual(harness.pageErrors, []);
  });

  test('the one who removes a member drops that member’s "Seen by" at once, without a reload', async () => {
    const { body: created } = await api(1, 'POST', '/groups', { name: 'Book club', user_ids: [2, 3] });
    const groupId = created.data.id as number;
    await api(1, 'POST', `/conversations/${groupId}/messages`, { body: 'Chapter three?' });
    await api(2, 'POST', `/conversations/${groupId}/read`);
    await api(3, 'POST', `/conversations/${groupId}/read`);
    await item(alice, 'Book club').click();
    await seeText(message(alice, 'Chapter three?').locator('.receipt'), 'Seen by Bob, Carol');

    // Alice removes Carol in Group settings: her own tab gets no GroupParticipantsChanged (X-Socket-ID).
    await alice.locator('#group-settings').click();
    await alice.locator('#remove-3').click();
    await alice.getByRole('button', { name: 'Remove', exact: true }).last().click();
    await alice.locator('.member[data-user-id="3"]').waitFor({ state: 'detached' });
    await alice.keyboard.press('Escape');
    await seeText(message(alice, 'Chapter three?').locator('.receipt'), /^Seen by Bob$/);
    await seeText(alice.locator('.system-note'), 'You removed Carol');
    await alice.waitForTimeout(300);
    assert.equal(await message(alice, 'Chapter three?').locator('.receipt').textContent(), 'Seen by Bob', 'no "User 3" either');
    assert.deepEqual(harness.pageErrors, []);
  });

  test('a member added later has not "seen" older messages until they open the group', async () => {
    const { body: created } = await api(1, 'POST', '/groups', { name: 'Garden', user_ids: [2] });
    const groupId = created.data.id as number;
    await api(1, 'POST', `/conversations/${groupId}/messages`, { body: 'Tomatoes are in' });
    await api(2, 'POST', `/conversations/${groupId}/read`);
    assert.equal((await api(1, 'POST', `/groups/${groupId}/participants`, { user_ids: [4] })).status, 200);
    const reads = (await api(1, 'GET', `/conversations/${groupId}/reads`)).body.data;
    const dave = reads.find((r: { user_id: number }) => r.user_id === 4);
    assert.ok(dave.last_read_message_id > 0 && dave.last_read_at === null, 'the server gives the newcomer a position, not a read');

    await item(alice, 'Garden').click();
    await seeText(message(alice, 'Tomatoes are in').locator('.receipt'), 'Seen by Bob');
    await alice.waitForTimeout(300);
    assert.equal(await message(alice, 'Tomatoes are in').locator('.receipt').textContent(), 'Seen by Bob');

    // Dave opens it (marks it read): now he has seen it, live and after a reload.
    await api(4, 'POST', `/conversations/${groupId}/read`);
    await seeText(message(alice, 'Tomatoes are in').locator('.receipt'), 'Seen by Bob, Dave');
    await alice.reload();
    await alice.locator('.connection[data-state="connected"]').waitFor();
    await item(alice, 'Garden').click();
    await seeText(message(alice, 'Tomatoes are in').locator('.receipt'), 'Seen by Bob, Dave');
    assert.deepEqual(harness.pageErrors, []);
  });

  test('a reply’s quote follows an edit and a delete of the message it quotes, live', async () => {
    await item(alice, 'Bob').click();
    await item(bob, 'Alice').click();
    const { body: original } = await api(1, 'POST', `/conversations/${directId}/messages`, { body: 'Meet at six' });
    await api(2, 'POST', `/conversations/${directId}/messages`, { body: 'Works for me', reply_to_id: original.data.id });
    const reply = message(bob, 'Works for me');
    await seeText(reply.locator('.reply-quote'), 'Meet at six');

    // Alice edits it in her page (Up edits her last message).
    await message(alice, 'Works for me').waitFor();
    await alice.locator('#composer-input').click();
    await alice.locator('#composer-input').fill('');
    const own = message(alice, 'Meet at six');
    await own.hover();
    await own.getByRole('button', { name: /^Edit/ }).click();
    await alice.locator('#composer-input').fill('Meet at seven');
    await alice.locator('#composer-input').press('Enter');
    await seeText(reply.locator('.reply-quote'), 'Meet at seven');
    await seeText(message(alice, 'Works for me').locator('.reply-quote'), 'Meet at seven');

    // Alice deletes it: the quote says so on both pages.
    assert.equal((await api(1, 'DELETE', `/messages/${original.data.id}`)).status, 204);
    await seeText(reply.locator('.reply-quote'), 'Deleted message');
    assert.deepEqual(harness.pageErrors, []);
  });

  test('deleting the newest message moves the conversation below one with a later message, live and after a reload', async () => {
    const { body: created } = await api(2, 'POST', '/groups', { name: 'Ramblers', user_ids: [1] });
    const groupId = created.data.id as number;
    await api(1, 'POST', `/conversations/${directId}/messages`, { body: 'an older one' });
    await api(2, 'POST', `/conversations/${groupId}/messages`, { body: 'walk on Sunday' });
    await alice.waitForTimeout(20);
    const { body: newest } = await api(1, 'POST', `/conversations/${directId}/messages`, { body: 'the newest, soon gone' });
    const order = async (page: Page) => (await page.locator('.conversation-item .item-title').allTextContents()).map((t) => t.replace(' (online)', ''));
    await bob.waitForFunction(() => document.querySelector('.conversation-item .item-title')?.textContent?.startsWith('Alice'));
    assert.deepEqual((await order(bob)).slice(0, 2), ['Alice', 'Ramblers']);

    assert.equal((await api(1, 'DELETE', `/messages/${newest.data.id}`)).status, 204);
    await bob.waitForFunction(() => document.querySelector('.conversation-item .item-title')?.textContent === 'Ramblers');
    assert.deepEqual((await order(bob)).slice(0, 2), ['Ramblers', 'Alice']);
    await seeText(item(bob, 'Alice').locator('.item-preview'), 'an older one');
    await bob.reload();
    await bob.locator('.connection[data-state="connected"]').waitFor();
    await item(bob, 'Alice').waitFor();
    assert.deepEqual((await order(bob)).slice(0, 2), ['Ramblers', 'Alice']);
    assert.deepEqual(harness.pageErrors, []);
  });
});
