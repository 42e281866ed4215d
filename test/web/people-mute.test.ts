// The "New chat" picker that finds people by name (GET /users?query=) and the per-conversation mute toggle
// (PUT/DELETE /conversations/{id}/mute) in the web client, in Chromium against a real Parley.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { item, seeText, skip, startHarness, type Harness } from './browser.js';

describe('web client: people picker and mute', { skip }, () => {
  let harness: Harness;
  let alice: Page;

  before(async () => {
    harness = await startHarness();
    // People Parley knows (a first request creates the user with the token's name).
    for (const [id, name] of [[2, 'Bob Stone'], [3, 'Zoë Martin'], [4, 'Zoltan Kis'], [5, 'Nora Alič']] as const) {
      await harness.app.token(id, name);
      await harness.app.request(id, 'GET', '/conversations');
    }
    alice = await harness.openPage();
    await harness.signIn(alice, 1, 'Alice');
  });

  after(async () => {
    await harness?.close();
  });

  const found = () => alice.locator('#people-results button.person');

  test('"New chat" finds people by the beginning of a name, ignoring accents, and opens the chat with the one picked', async () => {
    await alice.getByRole('button', { name: 'New chat' }).click();
    const query = alice.getByLabel('Find a person');
    await query.fill('zo');
    await seeText(found(), 'Zoltan Kis');
    // Names that start with the word, ordered by name with accents folded: Zoë before Zoltan.
    assert.deepEqual(await found().locator('span:not(.avatar)').allTextContents(), ['Zoë Martin', 'Zoltan Kis']);
    // Accents ignored: "ali" finds Nora Alič (and not Alice herself, who is the one searching).
    await query.fill('ali');
    await seeText(found(), 'Nora Alič');
    assert.deepEqual(await found().locator('span:not(.avatar)').allTextContents(), ['Nora Alič']);
    await query.fill('nobody');
    await seeText(alice.locator('#people-results'), 'No one found.');
    // Picking one starts the direct conversation and opens it.
    await query.fill('zoe mar');
    await seeText(found(), 'Zoë Martin');
    await found().filter({ hasText: 'Zoë Martin' }).click();
    await alice.locator('dialog[open]').waitFor({ state: 'detached' });
    await seeText(alice.locator('#thread-title'), 'Zoë Martin');
    await item(alice, 'Zoë Martin').waitFor();
    const { body } = await harness.app.request(3, 'GET', '/conversations');
    assert.equal(body.data.length, 1, 'Zoë has the conversation too');
    assert.deepEqual(harness.pageErrors, []);
  });

  test('the mute toggle mutes and unmutes the open conversation; the inbox marks it, also after an InboxUpdated', async () => {
    const mark = item(alice, 'Zoë Martin').locator('.muted-mark');
    assert.equal(await mark.count(), 0);
    await alice.locator('#mute-toggle').click();
    await mark.waitFor();
    await seeText(alice.locator('#mute-toggle'), 'Unmute');
    const conversationId = Number(await alice.locator('.thread').getAttribute('data-conversation-id'));
    const { body: stored } = await harness.app.request(1, 'GET', `/conversations/${conversationId}`);
    assert.equal(stored.data.muted, true);
    assert.equal(stored.data.muted_until, null);

    // A new message from Zoë (InboxUpdated, which has no mute keys) keeps the mark; it survives a reload too.
    await harness.app.request(3, 'POST', `/conversations/${conversationId}/messages`, { body: 'Still there?' });
    await seeText(item(alice, 'Zoë Martin').locator('.item-preview'), 'Still there?');
    assert.equal(await mark.count(), 1);
    await alice.reload();
    await mark.waitFor();

    // Unmute.
    await item(alice, 'Zoë Martin').click();
    await seeText(alice.locator('#mute-toggle'), 'Unmute');
    await alice.locator('#mute-toggle').click();
    await seeText(alice.locator('#mute-toggle'), /^Mute$/);
    await mark.waitFor({ state: 'detached' });
    const { body: after } = await harness.app.request(1, 'GET', `/conversations/${conversationId}`);
    assert.equal(after.data.muted, false);
    assert.deepEqual(harness.pageErrors, []);
  });
});
