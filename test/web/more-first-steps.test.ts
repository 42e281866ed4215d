// What first-time users tripped over, continued (first-steps.test.ts has the first part), in Chromium: New group,
// Add members and Block find people by name instead of asking for user ids; a direct conversation's header says
// "online" or when the other was last seen; reactions beyond the six common ones from a searchable emoji list;
// notices never over a conversation's header; the notifications button one short line.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { item, message, openDirectPair, seeText, skip, startHarness, type Harness } from './browser.js';

describe('web client: more first steps', { skip }, () => {
  let harness: Harness;
  let alice: Page;
  let bob: Page;
  let directId = 0;

  before(async () => {
    harness = await startHarness();
    ({ alice, bob, conversationId: directId } = await openDirectPair(harness));
    for (const [id, name] of [
      [3, 'Carol Jones'],
      [4, 'Dave Smith'],
      [5, 'Chloé Martin'],
    ] as const) {
      await harness.app.token(id, name);
      await harness.app.request(id, 'GET', '/conversations'); // the user exists from their first request
    }
  });

  after(async () => {
    await harness?.close();
  });

  const api = (userId: number, method: string, path: string, body?: unknown) => harness.app.request(userId, method, path, body);
  const found = (page: Page) => page.locator('dialog[open] .people-results button.person');
  const chips = (page: Page) => page.locator('dialog[open] .picked .chip');

  test('New group, Add members and Block pick people by name', async () => {
    // New group: two people chosen by name, one of them with Enter.
    await alice.getByRole('button', { name: 'New group' }).click();
    await alice.getByLabel('Group name').fill('Picnic');
    const members = alice.getByLabel('Members', { exact: true });
    await members.fill('ch');
    await seeText(found(alice), 'Chloé Martin');
    assert.deepEqual(await found(alice).allTextContents(), ['CMChloé Martin']);
    await members.press('Enter');
    await members.fill('car');
    await found(alice).filter({ hasText: 'Carol Jones' }).click();
    assert.deepEqual(await chips(alice).locator('span:not(.avatar)').allTextContents(), ['Chloé Martin', 'Carol Jones']);
    await members.fill('bo');
    await found(alice).filter({ hasText: 'Bob' }).click();
    await alice.getByRole('button', { name: 'Take Carol Jones off' }).click();
    assert.deepEqual(await chips(alice).locator('span:not(.avatar)').allTextContents(), ['Chloé Martin', 'Bob']);
    await alice.getByRole('button', { name: 'Create group' }).click();
    await seeText(alice.locator('#thread-title'), 'Picnic');
    const groupId = Number(await alice.locator('.thread').getAttribute('data-conversation-id'));
    const { body: group } = await api(1, 'GET', `/conversations/${groupId}`);
    assert.deepEqual(group.data.participants_preview.map((p: { id: number }) => p.id).sort(), [1, 2, 5]);

    // Add members: members already in the group are not offered.
    await alice.getByRole('button', { name: 'Group settings' }).click();
    const add = alice.locator('dialog[open]').getByLabel('Add members', { exact: true });
    await add.fill('c');
    await seeText(found(alice), 'Carol Jones');
    assert.deepEqual(await found(alice).allTextContents(), ['CJCarol Jones'], 'Chloé is a member already');
    await add.press('Enter');
    await alice.locator('dialog[open]').getByRole('button', { name: 'Add', exact: true }).click();
    await alice.locator('dialog[open] .member[data-user-id="3"]').waitFor();
    await seeText(alice.locator('.system-note'), 'You added Carol Jones');
    await alice.keyboard.press('Escape');

    // A user id still works.
    await alice.getByRole('button', { name: 'Group settings' }).click();
    await alice.locator('dialog[open]').getByLabel('Add members', { exact: true }).fill('4');
    await alice.locator('dialog[open]').getByRole('button', { name: 'Add', exact: true }).click();
    await alice.locator('dialog[open] .member[data-user-id="4"]').waitFor();
    await alice.keyboard.press('Escape');

    // Block: by name.
    await bob.getByRole('button', { name: 'Blocked' }).click();
    const block = bob.getByLabel('Block someone');
    await block.fill('ali');
    await found(bob).filter({ hasText: 'Alice' }).click();
    await bob.locator('dialog[open]').getByRole('button', { name: 'Block', exact: true }).click();
    await seeText(bob.locator('#blocked-list'), 'Alice');
    assert.equal(await chips(bob).count(), 0, 'the choice is cleared after blocking');
    await bob.locator('#blocked-list').getByRole('button', { name: 'Unblock Alice' }).click();
    await seeText(bob.locator('#blocked-list'), 'You have not blocked anyone.');
    await bob.keyboard.press('Escape');
    assert.equal((await api(2, 'GET', '/blocks')).body.data.length, 0);
    assert.ok(directId > 0);
    await item(bob, 'Alice').waitFor();
    assert.deepEqual(harness.pageErrors, []);
  });

  test('a direct conversation’s header: "online", then "last seen just now", and minutes later "last seen 5 min ago"', async () => {
    const dave = await harness.openPage();
    await dave.clock.install(); // the page's own clock, running as usual until fast-forwarded
    const carol = await harness.openPage();
    await harness.signIn(dave, 4, 'Dave Smith');
    await harness.signIn(carol, 3, 'Carol Jones');
    await api(4, 'POST', '/conversations', { user_id: 3 });
    await item(dave, 'Carol Jones').click();
    await seeText(dave.locator('#thread-subtitle'), /^online$/);

    await carol.goto('about:blank'); // pagehide: the offline signal
    await seeText(dave.locator('#thread-subtitle'), /^last seen just now$/);
    await dave.clock.fastForward('05:05');
    await seeText(dave.locator('#thread-subtitle'), /^last seen 5 min ago$/);

    // After a reload too, from GET /presence's last_seen_at (the page's clock stays 5 minutes ahead).
    await dave.reload();
    await seeText(dave.locator('#thread-subtitle'), /^last seen 5 min ago$/);
    await dave.context().close();
    await carol.context().close();
    assert.deepEqual(harness.pageErrors, []);
  });

  test('more than six reactions: "More reactions" searches a list of emoji by name', async () => {
    await item(alice, 'Bob').click();
    await item(bob, 'Alice').click();
    await api(1, 'POST', `/conversations/${directId}/messages`, { body: 'Guess what I saw today' });
    const onBob = message(bob, 'Guess what I saw today');
    const onAlice = message(alice, 'Guess what I saw today');
    await onBob.waitFor();
    const openPicker = async () => {
      await onBob.hover();
      await onBob.getByRole('button', { name: 'React to message from Alice' }).click();
    };
    // The six common ones first.
    for (const emoji of ['👍', '❤️', '😂', '🎉', '😮', '😢']) {
      await openPicker();
      await onBob.getByRole('button', { name: `React with ${emoji}` }).click();
      await onBob.locator(`.reaction[data-emoji="${emoji}"]`).waitFor();
    }
    // A seventh, found by name.
    await openPicker();
    await onBob.getByRole('button', { name: 'More reactions' }).click();
    const search = onBob.getByRole('searchbox', { name: 'Search emoji' });
    await search.waitFor();
    assert.ok(await search.evaluate((el) => el === document.activeElement), 'the search box has the focus');
    const shown = () => onBob.locator('.emoji-grid button').allTextContents();
    assert.ok((await shown()).length >= 100, 'all of them while the box is empty');
    await search.fill('hea');
    const hearts = await shown();
    assert.ok(hearts.includes('❤️') && hearts.includes('💜') && hearts.includes('😍') && !hearts.includes('🦄'), hearts.join(' '));
    await search.fill('uni');
    assert.deepEqual(await shown(), ['🦄']);
    await onBob.getByRole('button', { name: 'unicorn' }).click();
    await onAlice.locator('.reaction[data-emoji="🦄"]').waitFor();
    assert.equal(await onAlice.locator('.reaction').count(), 7);

    // Enter takes the first found; nothing found says so.
    await openPicker();
    await onBob.getByRole('button', { name: 'More reactions' }).click();
    await search.fill('zzzz');
    await seeText(onBob.locator('.emoji-grid'), 'No emoji found.');
    await search.fill('rock');
    await search.press('Enter');
    await onAlice.locator('.reaction[data-emoji="🚀"]').waitFor();
    assert.equal(await onBob.locator('.reaction-picker').isHidden(), true, 'the picker closes after a choice');
    assert.deepEqual(harness.pageErrors, []);
  });

  test('a notice never covers the header of the conversation opened next, nor the composer; the notifications button stays one short line', async () => {
    type Box = { x: number; y: number; width: number; height: number };
    const overlap = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
    const box = async (page: Page, selector: string) => (await page.locator(selector).first().boundingBox())!;
    await api(3, 'POST', '/conversations', { user_id: 2 }); // the conversation Bob opens next
    for (const viewport of [null, { width: 390, height: 844 }]) {
      if (viewport) {
        await bob.setViewportSize(viewport);
        await bob.getByRole('button', { name: 'Back to conversations' }).first().click();
      }
      // Bob is removed from a group he is not looking at: a notice says so.
      const { body } = await api(1, 'POST', '/groups', { name: `Quiz ${viewport ? 'phone' : 'desk'}`, user_ids: [2] });
      await item(bob, 'Alice').click();
      await bob.locator('.thread-header').waitFor();
      await api(1, 'DELETE', `/groups/${body.data.id}/participants/2`);
      const notice = bob.locator('#toasts .toast', { hasText: 'You were removed from' });
      await notice.waitFor();
      // Bob opens the next conversation while the notice is up.
      if (viewport) await bob.getByRole('button', { name: 'Back to conversations' }).first().click();
      await item(bob, 'Carol Jones').click();
      await seeText(bob.locator('#thread-title'), 'Carol Jones');
      assert.ok(await notice.isVisible(), 'the notice is still up');
      const toast = await box(bob, '#toasts .toast');
      for (const selector of ['.thread-header', 'form.composer']) {
        assert.ok(!overlap(toast, await box(bob, selector)), `${viewport ? 'phone' : 'desktop'}: the notice ${JSON.stringify(toast)} is clear of ${selector} ${JSON.stringify(await box(bob, selector))}`);
      }
      if (!viewport) assert.ok(!overlap(toast, await box(bob, '.sidebar')), 'desktop: clear of the sidebar');
      await notice.getByRole('button', { name: 'Dismiss' }).click();
    }
    await bob.setViewportSize({ width: 1180, height: 760 });
    await bob.getByRole('button', { name: 'Back to conversations' }).first().click().catch(() => {});

    // Notifications: refused by the browser, the button says so in two words, the reason is its tooltip and a notice.
    const push = bob.locator('#push-toggle');
    const before = await push.boundingBox();
    await push.click();
    await seeText(push, /^Notifications (blocked|failed)$/);
    assert.ok(((await push.getAttribute('title')) ?? '').length > 0, 'the reason is the tooltip');
    await bob.locator('#toasts .toast').first().waitFor();
    const after = await push.boundingBox();
    assert.equal(after?.height, before?.height, 'still one line');
    assert.deepEqual(harness.pageErrors, []);
  });
});
