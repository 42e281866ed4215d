// Pinned messages in the web client (docs/api.md "Pinned messages"), in Chromium against a real Parley: Pin and
// Unpin on the message toolbar for a group's owner and admins (not its members) and for either person of a direct
// conversation; the bar under the header with the count and the latest pinned message, live for the others
// (MessagePinned) and after a reload; a click lists the pins, and one of them scrolls the conversation to it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { item, message, seeText, skip, startHarness, type Harness } from './browser.js';

describe('web client: pinned messages', { skip }, () => {
  let harness: Harness;
  let alice: Page;
  let bob: Page;
  let groupId: number;

  before(async () => {
    harness = await startHarness();
    const app = harness.app;
    await app.token(1, 'Alice');
    await app.token(2, 'Bob');
    await app.request(2, 'GET', '/conversations');
    const { body } = await app.request(1, 'POST', '/groups', { name: 'Team', user_ids: [2] });
    groupId = body.data.id;
    await app.request(2, 'POST', `/conversations/${groupId}/messages`, { body: 'The plan is in the wiki' });
    for (let i = 1; i <= 40; i++) await app.request(1, 'POST', `/conversations/${groupId}/messages`, { body: `Filler ${i}` });
    alice = await harness.openPage();
    bob = await harness.openPage();
    await harness.signIn(alice, 1, 'Alice');
    await harness.signIn(bob, 2, 'Bob');
    await item(alice, 'Team').click();
    await item(bob, 'Team').click();
    await message(alice, 'Filler 40').waitFor();
    await message(bob, 'Filler 40').waitFor();
  });

  after(async () => {
    await harness?.close();
  });

  test('the owner pins from the toolbar; the bar shows the count and the latest, live for a member, who has no Pin', async () => {
    await message(bob, 'Filler 40').hover();
    assert.equal(await message(bob, 'Filler 40').getByRole('button', { name: 'Pin message from Alice', exact: true }).count(), 0, 'a member cannot pin');
    assert.equal(await bob.locator('#pin-bar').isVisible(), false, 'no bar without pins');

    await message(alice, 'Filler 39').hover();
    await message(alice, 'Filler 39').getByRole('button', { name: 'Pin message from Alice', exact: true }).click();
    await seeText(alice.locator('#pin-bar'), '1 pinned · Alice: Filler 39');
    await seeText(message(alice, 'Filler 39').locator('.pinned-mark'), 'pinned');
    await seeText(bob.locator('#pin-bar'), '1 pinned · Alice: Filler 39');
    await seeText(message(bob, 'Filler 39').locator('.pinned-mark'), 'pinned');

    await message(alice, 'Filler 40').hover();
    await message(alice, 'Filler 40').getByRole('button', { name: 'Pin message from Alice', exact: true }).click();
    await seeText(bob.locator('#pin-bar'), '2 pinned · Alice: Filler 40');
    const { body } = await harness.app.request(2, 'GET', `/conversations/${groupId}/pins`);
    assert.deepEqual(body.data.map((m: { body: string }) => m.body), ['Filler 40', 'Filler 39']);
    assert.deepEqual(harness.pageErrors, []);
  });

  test('Unpin takes it off the bar on both pages; the bar is there after a reload', async () => {
    await message(alice, 'Filler 40').hover();
    await message(alice, 'Filler 40').getByRole('button', { name: 'Unpin message from Alice', exact: true }).click();
    await seeText(alice.locator('#pin-bar'), '1 pinned · Alice: Filler 39');
    await seeText(bob.locator('#pin-bar'), '1 pinned · Alice: Filler 39');
    assert.equal(await message(bob, 'Filler 40').locator('.pinned-mark').count(), 0);
    await bob.reload();
    await seeText(bob.locator('#pin-bar'), '1 pinned · Alice: Filler 39');
    assert.deepEqual(harness.pageErrors, []);
  });

  test('a pin of a message pages back: the bar lists the pins and scrolls to the one chosen', async () => {
    // The oldest message is not on screen (two pages back); the API pins it, as another tab would.
    const { body } = await harness.app.request(1, 'GET', `/conversations/${groupId}/messages?after=0&limit=1`);
    const oldest = body.data[0];
    assert.equal(oldest.body, 'The plan is in the wiki');
    assert.equal((await harness.app.request(1, 'PUT', `/messages/${oldest.id}/pin`)).status, 200);
    await seeText(bob.locator('#pin-bar'), '2 pinned · Bob: The plan is in the wiki');
    assert.equal(await message(bob, 'The plan is in the wiki').count(), 0, 'not loaded yet');
    await bob.locator('#pin-bar').click();
    const dialog = bob.locator('dialog[open]');
    assert.deepEqual(await dialog.locator('.result-body').allTextContents(), ['The plan is in the wiki', 'Filler 39']);
    await dialog.locator('.search-result', { hasText: 'The plan is in the wiki' }).click();
    await message(bob, 'The plan is in the wiki').and(bob.locator('.found')).waitFor();
    assert.deepEqual(harness.pageErrors, []);
  });

  test('either person of a direct conversation may pin', async () => {
    const { body } = await harness.app.request(1, 'POST', '/conversations', { user_id: 2 });
    await harness.app.request(1, 'POST', `/conversations/${body.data.id}/messages`, { body: 'Just us' });
    await item(bob, 'Alice').click();
    await message(bob, 'Just us').hover();
    await message(bob, 'Just us').getByRole('button', { name: 'Pin message from Alice', exact: true }).click();
    await seeText(bob.locator('#pin-bar'), '1 pinned · Alice: Just us');
    assert.deepEqual(harness.pageErrors, []);
  });
});
