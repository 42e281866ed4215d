// Reactions and lasting read receipts in the web client (issue 12), in Chromium against a real Parley: two users
// in two browser contexts. Reactions are picked, counted and toggled live (MessageReactionsUpdated) and shown
// from history after a reload; "Seen" receipts come from GET /conversations/{id}/reads after a reload, keep
// updating from ConversationRead, and a removed group member's receipt goes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { item, message, seeText, skip, startHarness, type Harness } from './browser.js';

describe('web client: reactions and lasting receipts', { skip }, () => {
  let harness: Harness;
  let alice: Page;
  let bob: Page;
  let directId = 0;

  /** The count button of one emoji under a message. */
  const count = (page: Page, text: string, emoji: string) => message(page, text).locator(`.reaction[data-emoji="${emoji}"]`);

  before(async () => {
    harness = await startHarness();
    await harness.app.token(1, 'Alice');
    await harness.app.token(2, 'Bob');
    await harness.app.token(3, 'Carol');
    alice = await harness.openPage();
    bob = await harness.openPage();
    await harness.signIn(alice, 1, 'Alice');
    await harness.signIn(bob, 2, 'Bob');
    const { body } = await harness.app.request(1, 'POST', '/conversations', { user_id: 2 });
    directId = body.data.id;
  });

  after(async () => {
    await harness?.close();
  });

  test('a reaction picked on one page shows live on the other; clicking a count toggles my own reaction', async () => {
    await item(alice, 'Bob').click();
    await alice.locator('#composer-input').fill('Lunch at noon?');
    await alice.locator('#composer-input').press('Enter');
    await item(bob, 'Alice').click();
    await message(bob, 'Lunch at noon?').waitFor();
    assert.equal(await message(bob, 'Lunch at noon?').locator('.reaction').count(), 0, 'no reactions yet');

    // Bob opens the picker on Alice's message and picks 👍: his page shows it from the answer, pressed.
    await message(bob, 'Lunch at noon?').hover();
    await bob.getByRole('button', { name: 'React to message from Alice' }).click();
    await bob.getByRole('button', { name: 'React with 👍' }).click();
    await seeText(count(bob, 'Lunch at noon?', '👍'), '1');
    assert.equal(await count(bob, 'Lunch at noon?', '👍').getAttribute('aria-pressed'), 'true');

    // Alice gets it live (MessageReactionsUpdated), not pressed for her; she adds hers by clicking the count.
    await seeText(count(alice, 'Lunch at noon?', '👍'), '1');
    assert.equal(await count(alice, 'Lunch at noon?', '👍').getAttribute('aria-pressed'), 'false');
    await count(alice, 'Lunch at noon?', '👍').click();
    await seeText(count(alice, 'Lunch at noon?', '👍'), '2');
    assert.equal(await count(alice, 'Lunch at noon?', '👍').getAttribute('aria-pressed'), 'true');
    await seeText(count(bob, 'Lunch at noon?', '👍'), '2');

    // Bob takes his back by clicking the count: 1 on both pages, and no longer pressed for him.
    await count(bob, 'Lunch at noon?', '👍').click();
    await seeText(count(bob, 'Lunch at noon?', '👍'), '1');
    assert.equal(await count(bob, 'Lunch at noon?', '👍').getAttribute('aria-pressed'), 'false');
    await seeText(count(alice, 'Lunch at noon?', '👍'), '1');

    // A second emoji from the picker gets its own count.
    await message(bob, 'Lunch at noon?').hover();
    await bob.getByRole('button', { name: 'React to message from Alice' }).click();
    await bob.getByRole('button', { name: 'React with 🎉' }).click();
    await seeText(count(alice, 'Lunch at noon?', '🎉'), '1');

    // After a reload the counts come from history (`reactions` of the items), mine still pressed.
    await alice.reload();
    await alice.locator('.connection[data-state="connected"]').waitFor();
    await item(alice, 'Bob').click();
    await seeText(count(alice, 'Lunch at noon?', '👍'), '1');
    await seeText(count(alice, 'Lunch at noon?', '🎉'), '1');
    assert.equal(await count(alice, 'Lunch at noon?', '👍').getAttribute('aria-pressed'), 'true');
    assert.equal(await count(alice, 'Lunch at noon?', '🎉').getAttribute('aria-pressed'), 'false');
    assert.deepEqual(harness.pageErrors, []);
  });

  test('"Seen" survives a reload (GET /reads) and keeps following ConversationRead', async () => {
    // Bob has the conversation open, so he has read "Lunch at noon?": Alice sees "Seen" under it, also after a reload.
    await seeText(alice.locator('.message.mine .receipt'), 'Seen');
    await alice.reload();
    await alice.locator('.connection[data-state="connected"]').waitFor();
    await item(alice, 'Bob').click();
    await message(alice, 'Lunch at noon?').locator('.receipt', { hasText: 'Seen' }).waitFor();

    // Bob leaves for his inbox (another page); Alice writes twice: the receipt stays on the first one.
    await bob.goto('about:blank');
    await harness.app.request(1, 'POST', `/conversations/${directId}/messages`, { body: 'Or one?' });
    await message(alice, 'Or one?').waitFor();
    await alice.waitForTimeout(300);
    assert.equal(await message(alice, 'Or one?').locator('.receipt').count(), 0, 'Bob has not read the new one');
    assert.equal(await alice.locator('.receipt').count(), 1);

    // Bob reads it (through the API: ConversationRead): the receipt moves to the newest message, live.
    await harness.app.request(2, 'POST', `/conversations/${directId}/read`);
    await message(alice, 'Or one?').locator('.receipt', { hasText: 'Seen' }).waitFor();
    assert.equal(await alice.locator('.receipt').count(), 1, 'one receipt, under the newest message read');
    assert.deepEqual(harness.pageErrors, []);
  });

  test('in a group, "Seen by" names the readers after a reload, and drops a member who is removed', async () => {
    await harness.app.request(3, 'GET', '/conversations'); // Carol signs in once, so Parley knows her
    const { body: group } = await harness.app.request(1, 'POST', '/groups', { name: 'Lunch crew', user_ids: [2, 3] });
    assert.ok(group.data?.id, JSON.stringify(group));
    const groupId = group.data.id;
    await harness.app.request(1, 'POST', `/conversations/${groupId}/messages`, { body: 'Pizza or sushi?' });
    await harness.app.request(2, 'POST', `/conversations/${groupId}/read`);
    await harness.app.request(3, 'POST', `/conversations/${groupId}/read`);

    // Both read before Alice opened the group: only GET /reads can tell her.
    await item(alice, 'Lunch crew').click();
    await seeText(message(alice, 'Pizza or sushi?').locator('.receipt'), 'Seen by Bob, Carol');

    // Alice removes Carol (GroupParticipantsChanged reaches her page): Carol's receipt goes.
    const removed = await harness.app.request(1, 'DELETE', `/groups/${groupId}/participants/3`);
    assert.equal(removed.status, 204);
    await seeText(message(alice, 'Pizza or sushi?').locator('.receipt'), /^Seen by Bob$/);
    assert.deepEqual(harness.pageErrors, []);
  });
});
