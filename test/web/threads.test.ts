// Threads in the web client (docs/api.md "Threads"), in Chromium against a real Parley: "Reply in thread" opens the
// thread panel beside the conversation (over it at phone width) with the root and its replies oldest first; a reply
// from its composer goes out with thread_id and stays out of the conversation; the root's "N replies" line and its
// unread dot follow ThreadReplySent and ThreadUpdated live, and catch up over /sync after the socket was lost;
// opening the thread reads it; the sidebar's "Threads" list opens a conversation with its thread.
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { item, message, seeText, skip, startHarness, type Harness } from './browser.js';

describe('web client: threads', { skip }, () => {
  let harness: Harness;
  let alice: Page;
  let bob: Page;
  let conversationId: number;
  let rootId: number;
  const bobSockets: Socket[] = [];

  before(async () => {
    harness = await startHarness();
    await harness.app.token(1, 'Alice');
    await harness.app.token(2, 'Bob');
    alice = await harness.openPage();
    bob = await harness.openPage();
    await harness.signIn(alice, 1, 'Alice');
    // Bob's socket, to cut his window off as a lost network does.
    let collecting = true;
    harness.app.app.http.server.prependListener('upgrade', (_request, socket: Socket) => void (collecting && bobSockets.push(socket)));
    await harness.signIn(bob, 2, 'Bob');
    collecting = false;
    ({ body: { data: { id: conversationId } } } = await harness.app.request(1, 'POST', '/conversations', { user_id: 2 }));
    await item(alice, 'Bob').click();
    await item(bob, 'Alice').click();
    const { body } = await harness.app.request(1, 'POST', `/conversations/${conversationId}/messages`, { body: 'Lunch plans?' });
    rootId = body.data.id;
    await message(bob, 'Lunch plans?').waitFor();
    await message(alice, 'Lunch plans?').waitFor();
  });

  after(async () => {
    await harness?.close();
  });

  const replies = (page: Page) => page.locator('#reply-list .message:not(.pending) .body');
  const line = (page: Page) => message(page, 'Lunch plans?').locator('.thread-line');

  test('"Reply in thread" opens the panel beside the conversation; a reply goes to the thread only, and the other side sees it live with a dot', async () => {
    await message(bob, 'Lunch plans?').hover();
    await message(bob, 'Lunch plans?').getByRole('button', { name: 'Reply in thread message from Alice' }).click();
    const panel = bob.locator('.thread-panel');
    await panel.waitFor();
    await seeText(replies(bob), 'Lunch plans?'); // the root, first
    // Beside the conversation, not over it.
    const [pane, side] = await Promise.all([bob.locator('.thread').boundingBox(), panel.boundingBox()]);
    assert.ok(pane && side && side.x >= pane.x + pane.width - 1, `panel at ${side?.x}, conversation ends at ${pane && pane.x + pane.width}`);
    await bob.locator('#thread-input').fill('Pizza?');
    await bob.locator('#thread-input').press('Enter');
    await seeText(replies(bob), 'Pizza?');
    await seeText(line(bob), /^1 reply · last reply/);
    assert.equal(await message(bob, 'Pizza?').count(), 0, 'not in the conversation');

    // Stored as a reply in the thread, out of the history.
    const { body: thread } = await harness.app.request(1, 'GET', `/messages/${rootId}/thread`);
    assert.deepEqual(thread.data.map((m: { body: string; thread_id: number }) => [m.body, m.thread_id]), [['Pizza?', rootId]]);

    // Alice: the line and the dot, live; nothing in her conversation.
    await seeText(line(alice), /^1 reply · last reply/);
    await line(alice).locator('.unread-dot').waitFor();
    assert.equal(await message(alice, 'Pizza?').count(), 0);
    assert.deepEqual(harness.pageErrors, []);
  });

  test('opening the thread shows the replies oldest first, reads it, and follows new replies live', async () => {
    await harness.app.request(2, 'POST', `/conversations/${conversationId}/messages`, { body: 'Or sushi', thread_id: rootId });
    await seeText(replies(bob), 'Or sushi');
    await seeText(line(alice), /^2 replies/);
    await line(alice).click();
    await seeText(replies(alice), 'Or sushi');
    assert.deepEqual(await replies(alice).allTextContents(), ['Lunch plans?', 'Pizza?', 'Or sushi']);
    await line(alice).locator('.unread-dot').waitFor({ state: 'detached' });
    // Read on the server too.
    for (let i = 0; ; i++) {
      const { body } = await harness.app.request(1, 'GET', '/threads');
      if (body.data[0]?.unread_reply_count === 0) break;
      assert.ok(i < 30, JSON.stringify(body.data));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Alice answers from her panel; Bob's panel shows it live.
    await alice.locator('#thread-input').fill('Sushi it is');
    await alice.locator('#thread-input').press('Enter');
    await seeText(replies(bob), 'Sushi it is');
    await seeText(line(bob), /^3 replies/);
    await seeText(line(alice), /^3 replies/);
    assert.equal(await line(alice).locator('.unread-dot').count(), 0, 'a reply of my own is no news');
    await alice.getByRole('button', { name: 'Close thread' }).click();
    await alice.locator('.thread-panel').waitFor({ state: 'detached' });
    assert.deepEqual(harness.pageErrors, []);
  });

  test('replies missed while the socket was lost come over /sync: the count and the dot', async () => {
    await bob.getByRole('button', { name: 'Close thread' }).click();
    // Bob's window is cut off; Alice replies meanwhile.
    await bob.context().setOffline(true);
    for (const socket of bobSockets.splice(0)) socket.destroy();
    await bob.locator('.connection:not([data-state="connected"])').waitFor();
    await harness.app.request(1, 'POST', `/conversations/${conversationId}/messages`, { body: 'At noon', thread_id: rootId });
    await bob.context().setOffline(false);
    await bob.locator('.connection[data-state="connected"]').waitFor();
    await seeText(line(bob), /^4 replies/);
    await line(bob).locator('.unread-dot').waitFor();
    assert.deepEqual(harness.pageErrors.filter((e) => !/^WebSocket connection to .* failed/.test(e)), []);
    harness.pageErrors.length = 0;
  });

  test('the sidebar\'s "Threads" list shows unread replies and opens the conversation with its thread', async () => {
    await bob.getByRole('button', { name: 'Threads' }).click();
    const entry = bob.locator('#side-panel .search-result', { hasText: 'Lunch plans?' });
    await seeText(entry, '4 replies');
    await seeText(entry.locator('.badge'), '1');
    await entry.click();
    await seeText(replies(bob), 'At noon');
    await line(bob).locator('.unread-dot').waitFor({ state: 'detached' });
    await bob.getByRole('button', { name: 'Back to inbox' }).click();
    await bob.locator('#inbox-list').waitFor();
    assert.deepEqual(harness.pageErrors, []);
  });

  test('at phone width the panel covers the conversation, and closing it shows the conversation again', async () => {
    await bob.setViewportSize({ width: 390, height: 844 });
    const side = await bob.locator('.thread-panel').boundingBox();
    assert.ok(side && side.x === 0 && side.width === 390, JSON.stringify(side));
    await bob.getByRole('button', { name: 'Close thread' }).click();
    await message(bob, 'Lunch plans?').waitFor();
    assert.ok(await bob.locator('#composer-input').isVisible());
    assert.deepEqual(harness.pageErrors, []);
  });
});
