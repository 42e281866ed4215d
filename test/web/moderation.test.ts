// Moderation in the web client (docs/api.md "Moderation" and "Compliance"), in Chromium against a real Parley: the
// composer says why a send is refused (slow mode with a live countdown, a frozen group, a blocked word); Report on
// others' messages; slow mode, Freeze and bans in the group settings of owners and admins; an erased user shown as
// "Deleted user".
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { item, message, seeText, skip, startHarness, type Harness } from './browser.js';

describe('web client: moderation', { skip }, () => {
  let harness: Harness;
  let alice: Page;
  let bob: Page;
  let groupId: number;

  const send = async (page: Page, text: string) => {
    await page.locator('#composer-input').fill(text);
    await page.locator('#composer-input').press('Enter');
  };
  // The toolbar shows on focus as on hover; the keyboard reaches it wherever it wraps.
  const press = async (button: Locator) => {
    await button.focus();
    await button.press('Enter');
  };
  const countdown = async (page: Page) => Number((await page.locator('#composer-note').textContent())?.match(/in (\d+) s/)?.[1]);

  before(async () => {
    harness = await startHarness({ CHAT_BLOCKED_WORDS: 'grommet' });
    const app = harness.app;
    await app.token(1, 'Alice');
    await app.token(2, 'Bob');
    await app.token(3, 'Carol');
    await app.token(4, 'Dave');
    for (const user of [2, 3, 4]) await app.request(user, 'GET', '/conversations'); // known to the server
    const { body } = await app.request(1, 'POST', '/groups', { name: 'Team', user_ids: [2, 3, 4] });
    groupId = body.data.id;
    await app.request(4, 'POST', `/conversations/${groupId}/messages`, { body: 'Dave was here' });
    await app.request(1, 'POST', `/conversations/${groupId}/messages`, { body: 'Welcome' });
    alice = await harness.openPage();
    bob = await harness.openPage();
    await harness.signIn(alice, 1, 'Alice');
    await harness.signIn(bob, 2, 'Bob');
    await item(alice, 'Team').click();
    await item(bob, 'Team').click();
    await message(bob, 'Welcome').waitFor();
  });

  after(async () => {
    await harness?.close();
  });

  test('slow mode: a member counts down after sending, and after a refused send (Retry-After)', async () => {
    assert.equal((await harness.app.request(1, 'PATCH', `/groups/${groupId}`, { slow_mode_s: 30 })).status, 200);
    await send(bob, 'First in slow mode');
    await message(bob, 'First in slow mode').locator('.meta:not(.send-state)').first().waitFor();
    await seeText(bob.locator('#composer-note'), /^Slow mode: you can send again in (30|29) s\.$/);
    assert.equal(await bob.locator('#composer-input').getAttribute('placeholder'), 'Write a message… (slow mode: 30 s)');
    assert.equal(await bob.locator('form.composer button.send').isDisabled(), true);
    const first = await countdown(bob);
    await bob.waitForTimeout(2_100);
    assert.ok((await countdown(bob)) <= first - 2, 'the countdown is live');

    // A reload forgets the wait: the server's 429 and its Retry-After bring it back.
    await bob.reload();
    await message(bob, 'First in slow mode').waitFor();
    assert.equal(await bob.locator('#composer-note').isVisible(), false);
    await send(bob, 'Too soon');
    await seeText(message(bob, 'Too soon').locator('.send-state'), 'Failed');
    await seeText(bob.locator('#composer-note'), /^Slow mode: you can send again in \d+ s\.$/);
    const left = await countdown(bob);
    assert.ok(left > 20 && left <= 28, `Retry-After's ${left} s`);

    // The owner is not slowed down.
    await send(alice, 'Owners are not slowed');
    await send(alice, 'Not at all');
    await message(bob, 'Not at all').waitFor();
    assert.equal(await alice.locator('#composer-note').isVisible(), false);
    assert.equal((await harness.app.request(1, 'PATCH', `/groups/${groupId}`, { slow_mode_s: 0 })).status, 200);
    assert.deepEqual(harness.pageErrors, []);
  });

  test('a frozen group: a member’s composer (and thread panel’s) is disabled with the reason, live both ways; the owner still sends', async () => {
    await press(message(bob, 'Welcome').getByRole('button', { name: 'Reply in thread message from Alice', exact: true }));
    await bob.locator('#thread-input').waitFor();
    assert.equal((await harness.app.request(1, 'PATCH', `/groups/${groupId}`, { frozen: true })).status, 200);
    await seeText(bob.locator('#composer-note'), 'Only owners and admins can send messages while the group is frozen.');
    assert.equal(await bob.locator('#composer-input').isDisabled(), true);
    await seeText(bob.locator('#thread-note'), 'Only owners and admins can send messages while the group is frozen.');
    assert.equal(await bob.locator('#thread-input').isDisabled(), true);
    await send(alice, 'Frozen, but the owner speaks');
    await message(bob, 'Frozen, but the owner speaks').waitFor();
    assert.equal(await alice.locator('#composer-note').isVisible(), false);
    assert.equal((await harness.app.request(1, 'PATCH', `/groups/${groupId}`, { frozen: false })).status, 200);
    await bob.locator('#composer-note').waitFor({ state: 'hidden' });
    assert.equal(await bob.locator('#composer-input').isDisabled(), false);
    assert.equal(await bob.locator('#thread-input').isDisabled(), false);
    await bob.getByRole('button', { name: 'Close thread' }).click();
    await send(bob, 'Thawed');
    await message(alice, 'Thawed').waitFor();
    assert.deepEqual(harness.pageErrors, []);
  });

  test('a blocked word: the send fails with a clear note, gone with the next send', async () => {
    await send(bob, 'Pass me the GROMMET please');
    await seeText(message(bob, 'Pass me the GROMMET please').locator('.send-state'), 'Failed');
    await seeText(bob.locator('#composer-note'), 'Not sent: the message contains a word this chat does not allow. Reword it and send again.');
    await send(bob, 'Pass me the washer please');
    await message(alice, 'Pass me the washer please').waitFor();
    await bob.locator('#composer-note').waitFor({ state: 'hidden' });
    assert.deepEqual(harness.pageErrors, []);
  });

  test('Report: a reason and a note, "Reported" after; asking again says it was already reported', async () => {
    await message(bob, 'Welcome').hover();
    assert.equal(await message(bob, 'Thawed').getByRole('button', { name: /^Report/ }).count(), 0, 'not my own messages');
    await press(message(bob, 'Welcome').getByRole('button', { name: 'Report message from Alice', exact: true }));
    const dialog = bob.locator('dialog[open]');
    await dialog.getByLabel('Reason').selectOption('abuse');
    await dialog.getByLabel('Note (optional)').fill('Rude welcome');
    await dialog.getByRole('button', { name: 'Report', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await message(bob, 'Welcome').hover();
    await message(bob, 'Welcome').getByRole('button', { name: 'Reported message from Alice', exact: true }).waitFor();
    const welcome = (await harness.app.request(2, 'GET', `/conversations/${groupId}/messages?limit=50`)).body.data.find((m: { body: string }) => m.body === 'Welcome');
    const again = await harness.app.request(2, 'POST', `/messages/${welcome.id}/report`, { reason: 'spam' });
    assert.equal(again.status, 409, 'the report was stored');

    // After a reload the page does not know; the server's 409 says so.
    await bob.reload();
    await message(bob, 'Welcome').hover();
    await press(message(bob, 'Welcome').getByRole('button', { name: 'Report message from Alice', exact: true }));
    await bob.locator('dialog[open]').getByRole('button', { name: 'Report', exact: true }).click();
    await seeText(bob.locator('.toast'), 'You already reported this message.');
    await message(bob, 'Welcome').hover();
    await message(bob, 'Welcome').getByRole('button', { name: 'Reported message from Alice', exact: true }).waitFor();
    assert.deepEqual(harness.pageErrors, []);
  });

  test('group settings: slow mode and Freeze for the owner, a member sees neither; Ban beside Remove, the Banned list with Unban', async () => {
    await bob.locator('#group-settings').click();
    assert.equal(await bob.locator('#settings-slow-mode').count(), 0, 'a member has no moderation');
    assert.equal(await bob.locator('#ban-3').count(), 0);
    await bob.keyboard.press('Escape');

    await alice.locator('#group-settings').click();
    const settings = alice.locator('dialog[open]').first();
    await settings.getByLabel('Slow mode').selectOption({ label: '1 min' });
    await bob.locator('#composer-input[placeholder="Write a message… (slow mode: 1 min)"]').waitFor();
    const group = async () => (await harness.app.request(1, 'GET', `/conversations/${groupId}`)).body.data;
    assert.equal((await group()).slow_mode_s, 60);
    // Counted from Bob's last message (sent or refused: the server's Retry-After), under a minute.
    await send(bob, 'Under a minute of slow mode');
    await seeText(bob.locator('#composer-note'), /^Slow mode: you can send again in \d+ s\.$/);
    assert.ok((await countdown(bob)) <= 60);

    await settings.getByRole('button', { name: 'Freeze' }).click();
    await seeText(bob.locator('#composer-note'), 'Only owners and admins can send messages while the group is frozen.');
    await settings.getByRole('button', { name: 'Unfreeze' }).click();
    await settings.getByLabel('Slow mode').selectOption({ label: 'Off' });
    await bob.locator('#composer-note').waitFor({ state: 'hidden' });
    assert.equal(await bob.locator('#composer-input').getAttribute('placeholder'), 'Write a message…');
    assert.deepEqual({ slow_mode_s: (await group()).slow_mode_s, frozen: (await group()).frozen }, { slow_mode_s: 0, frozen: false });

    await seeText(settings.locator('#banned-list'), 'Nobody is banned.');
    await settings.getByRole('button', { name: 'Ban Carol' }).click();
    await alice.locator('dialog[open]').last().getByRole('button', { name: 'Ban', exact: true }).click();
    await seeText(settings.locator('#banned-list'), 'Carol #3');
    assert.equal(await settings.locator('.member[data-user-id="3"]').count(), 0, 'removed from the members');
    const addBack = await harness.app.request(1, 'POST', `/groups/${groupId}/participants`, { user_ids: [3] });
    assert.equal(addBack.status, 403);
    assert.equal(addBack.body.code, 'banned');
    await settings.getByRole('button', { name: 'Unban Carol' }).click();
    await seeText(settings.locator('#banned-list'), 'Nobody is banned.');
    assert.equal((await harness.app.request(1, 'POST', `/groups/${groupId}/participants`, { user_ids: [3] })).status, 200);
    await alice.keyboard.press('Escape');
    assert.deepEqual(harness.pageErrors, []);
  });

  test('an erased user is "Deleted user": muted, with a blank avatar, in messages and the inbox', async () => {
    const { body } = await harness.app.request(1, 'POST', '/conversations', { user_id: 4 });
    await harness.app.request(4, 'POST', `/conversations/${body.data.id}/messages`, { body: 'Bye, Alice' });
    const erase = await harness.app.request(null, 'DELETE', '/users/4?messages=keep', undefined, { 'x-chat-server-key': harness.app.config.serverKey });
    assert.equal(erase.status, 202);
    await alice.reload();
    await item(alice, 'Team').click();
    const daves = message(alice, 'Dave was here');
    await seeText(daves.locator('.sender'), 'Deleted user');
    assert.equal(await daves.locator('.sender').getAttribute('class'), 'sender erased');
    assert.equal(await daves.locator('.avatar').getAttribute('class'), 'avatar erased message-avatar');
    assert.equal(await daves.locator('.avatar').textContent(), '', 'no "DU" initials');
    const direct = item(alice, 'Deleted user');
    assert.equal(await direct.locator('.item-title').getAttribute('class'), 'item-title erased');
    assert.equal(await direct.locator('.avatar').textContent(), '');
    assert.deepEqual(harness.pageErrors, []);
  });
});
