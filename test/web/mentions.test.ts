// Mentions in the web client, in Chromium against a real Parley: "@" + letters in the composer offers the
// conversation's participants, choosing one inserts "@Name" and the send carries mentioned_user_ids; the
// mentioned user's inbox shows an "@" badge (unread_mention_count) and the message shows the mention highlighted.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { item, message, seeText, skip, startHarness, type Harness } from './browser.js';

describe('web client: mentions', { skip }, () => {
  let harness: Harness;
  let alice: Page;
  let carol: Page;
  let groupId = 0;

  before(async () => {
    harness = await startHarness();
    for (const [id, name] of [[1, 'Alice'], [2, 'Bob'], [3, 'Carol'], [4, 'Cassandra Lee']] as const) {
      await harness.app.token(id, name);
      await harness.app.request(id, 'GET', '/conversations');
    }
    const { body } = await harness.app.request(1, 'POST', '/groups', { name: 'Trip', user_ids: [2, 3, 4] });
    groupId = body.data.id;
    assert.ok(groupId > 0);
    alice = await harness.openPage();
    carol = await harness.openPage();
    await harness.signIn(alice, 1, 'Alice');
    await harness.signIn(carol, 3, 'Carol');
  });

  after(async () => {
    await harness?.close();
  });

  test('"@" and letters offer the participants; the one chosen is inserted and sent as mentioned_user_ids', async () => {
    await item(alice, 'Trip').click();
    const box = alice.locator('#composer-input');
    await box.pressSequentially('Tickets for @ca');
    const list = alice.getByRole('listbox', { name: 'People to mention' });
    await list.waitFor();
    // Names with a word starting "ca": Carol and Cassandra Lee, not Bob (and never Alice herself).
    assert.deepEqual(await list.getByRole('option').allTextContents(), ['Carol', 'Cassandra Lee']);
    await box.press('Enter'); // chooses the first, does not send
    assert.equal(await box.inputValue(), 'Tickets for @Carol ');
    assert.equal(await list.isVisible(), false);
    // Typing on narrows the list; Escape closes it without choosing.
    await box.pressSequentially('and @cas');
    assert.deepEqual(await list.getByRole('option').allTextContents(), ['Cassandra Lee']);
    await box.press('Escape');
    assert.equal(await list.isVisible(), false);
    await box.press('Backspace');
    await box.press('Backspace');
    await box.press('Backspace');
    await box.press('Backspace');
    await box.pressSequentially('are booked');
    await box.press('Enter');
    await message(alice, 'Tickets for @Carol and are booked').locator('.mention', { hasText: '@Carol' }).waitFor();

    const { body } = await harness.app.request(2, 'GET', `/conversations/${groupId}/messages?limit=1`);
    assert.equal(body.data[0].body, 'Tickets for @Carol and are booked');
    assert.deepEqual(body.data[0].mentioned_user_ids, [3]);
    assert.deepEqual(harness.pageErrors, []);
  });

  test('the mentioned user sees an "@" badge in the inbox, and the mention highlighted as theirs', async () => {
    await seeText(item(carol, 'Trip').locator('.mention-badge'), '@');
    // A message naming no one later does not take the badge away.
    await harness.app.request(2, 'POST', `/conversations/${groupId}/messages`, { body: 'Great!' });
    await seeText(item(carol, 'Trip').locator('.item-preview'), 'Great!');
    await item(carol, 'Trip').locator('.mention-badge').waitFor();
    // Opening it reads it: the badge goes; the mention is marked as Carol's own.
    await item(carol, 'Trip').click();
    await seeText(message(carol, 'Tickets for').locator('.mention.mention-me'), '@Carol');
    await item(carol, 'Trip').locator('.mention-badge').waitFor({ state: 'detached' });
    // A live mention while Carol is elsewhere brings it back (InboxUpdated, then the conversation's count).
    // Opening marked it read on the server too.
    for (let i = 0; ; i++) {
      const { body } = await harness.app.request(3, 'GET', `/conversations/${groupId}`);
      if (body.data.unread_mention_count === 0) break;
      assert.ok(i < 50, 'the mention count is cleared by reading');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await carol.goto(harness.app.baseUrl); // the inbox, no conversation open
    await carol.locator('.connection[data-state="connected"]').waitFor();
    await item(carol, 'Trip').waitFor();
    assert.equal(await item(carol, 'Trip').locator('.mention-badge').count(), 0);
    await harness.app.request(2, 'POST', `/conversations/${groupId}/messages`, { body: 'Right, @Carol?', mentioned_user_ids: [3] });
    await seeText(item(carol, 'Trip').locator('.mention-badge'), '@');
    assert.deepEqual(harness.pageErrors, []);
  });
});
