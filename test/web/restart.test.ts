// The server restarts (a deploy, a crash): a page that was open is live again within about 2 s of the new server
// answering, not after pusher-js's own back-off (which grows to 10-60 s), and it catches up with what was sent
// meanwhile. Parley is stopped as a deployment stops it (sockets closed with 4200) and started again on the same
// port with the same data directory.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { message, openDirectPair, skip, startHarness, type Harness } from './browser.js';

describe('web client: after a server restart', { skip }, () => {
  let harness: Harness;
  let alice: Page;
  let bob: Page;
  let conversationId = 0;

  before(async () => {
    harness = await startHarness();
    ({ alice, bob, conversationId } = await openDirectPair(harness));
  });

  after(async () => {
    await harness?.close();
  });

  /** The page errors apart from Chromium's own report of each refused attempt while the server is down. */
  const errors = () => harness.pageErrors.filter((e) => !/^WebSocket connection to .* failed: .*ERR_CONNECTION_REFUSED$/.test(e));

  /** How long after `since` the page says "Live" again. */
  async function liveAfter(page: Page, since: number): Promise<number> {
    await page.locator('.connection[data-state="connected"]').waitFor({ timeout: 30_000 });
    return Date.now() - since;
  }

  test('live again within about 2 s of the new server answering, down for 1 s and for 6 s, with the messages sent meanwhile', async () => {
    for (const downMs of [1_000, 6_000]) {
      await harness.restartApp(async () => {
        await bob.locator('.connection:not([data-state="connected"])').waitFor();
        await new Promise((resolve) => setTimeout(resolve, downMs));
      });
      const answering = Date.now();
      // Sent before Bob's page is back: it comes from the catch-up (GET /sync), not from the socket.
      const text = `Back after ${downMs} ms`;
      await harness.app.request(1, 'POST', `/conversations/${conversationId}/messages`, { body: text });
      const [bobMs, aliceMs] = await Promise.all([liveAfter(bob, answering), liveAfter(alice, answering)]);
      // pusher-js alone waits 1 s, then lets attempts time out over 15-60 s: the bound is well below that.
      assert.ok(bobMs < 2_500, `Bob's page is live ${bobMs} ms after the server answers (down ${downMs} ms)`);
      assert.ok(aliceMs < 2_500, `Alice's page is live ${aliceMs} ms after the server answers (down ${downMs} ms)`);
      await message(bob, text).waitFor({ timeout: 3_000 });

      // And live events flow again.
      const live = `Live again after ${downMs} ms`;
      await alice.locator('#composer-input').fill(live);
      await alice.keyboard.press('Enter');
      await message(bob, live).waitFor({ timeout: 3_000 });
    }
    assert.deepEqual(errors(), []);
  });

  test('back online or shown again: a fresh attempt at once', async () => {
    await harness.restartApp(async () => {
      await bob.locator('.connection:not([data-state="connected"])').waitFor();
      await new Promise((resolve) => setTimeout(resolve, 13_000)); // long enough for the retries to have slowed down
    });
    const answering = Date.now();
    await bob.context().setOffline(true);
    await bob.context().setOffline(false); // the window's `online` event
    await alice.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    const [bobMs, aliceMs] = await Promise.all([liveAfter(bob, answering), liveAfter(alice, answering)]);
    assert.ok(bobMs < 1_500, `Bob's page is live ${bobMs} ms after going online`);
    assert.ok(aliceMs < 1_500, `Alice's page is live ${aliceMs} ms after being shown`);
    assert.deepEqual(errors(), []);
  });
});
