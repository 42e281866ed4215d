// Moderation in the web client (docs/api.md "Moderation"), in Chromium against a real Parley: the composer says
// why a send is refused (slow mode with a live countdown, a frozen group, a blocked word).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
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
  const countdown = async (page: Page) => Number((await page.locator('#composer-note').textContent())?.match(/in (\d+) s/)?.[1]);

  before(async () => {
    harness = await startHarness({ CHAT_BLOCKED_WORDS: 'grommet' });
    const app = harness.app;
    await app.token(1, 'Alice');
    await app.token(2, 'Bob');
    await app.token(3, 'Carol');
    for (const user of [2, 3]) await app.request(user, 'GET', '/conversations'); // known to the server
    const { body } = await app.request(1, 'POST', '/groups', { name: 'Team', user_ids: [2, 3] });
    groupId = body.data.id;
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

  test('a frozen group: a member’s composer is disabled with the reason, live both ways; the owner still sends', async () => {
    assert.equal((await harness.app.request(1, 'PATCH', `/groups/${groupId}`, { frozen: true })).status, 200);
    await seeText(bob.locator('#composer-note'), 'Only owners and admins can send messages while the group is frozen.');
    assert.equal(await bob.locator('#composer-input').isDisabled(), true);
    await send(alice, 'Frozen, but the owner speaks');
    await message(bob, 'Frozen, but the owner speaks').waitFor();
    assert.equal(await alice.locator('#composer-note').isVisible(), false);
    assert.equal((await harness.app.request(1, 'PATCH', `/groups/${groupId}`, { frozen: false })).status, 200);
    await bob.locator('#composer-note').waitFor({ state: 'hidden' });
    assert.equal(await bob.locator('#composer-input').isDisabled(), false);
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
});
