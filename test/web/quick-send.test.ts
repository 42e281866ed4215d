// Optimistic sends (issue 14's first bug): quick sends in a row, with and without added latency. Each message
// shows at once as "Sending…", the composer is cleared and free at once, nothing typed after Enter is lost,
// every message arrives once and in order on the other page, and the typing indicator is cleared there.
// A failed send shows "Failed" with Retry, and the retry posts it once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { messages, openDirectPair, seeText, skip, startHarness, type Harness } from './browser.js';

describe('web client: quick sends', { skip }, () => {
  let harness: Harness;
  let alice: Page;
  let bob: Page;
  let directId = 0;

  before(async () => {
    harness = await startHarness();
    ({ alice, bob, conversationId: directId } = await openDirectPair(harness));
  });

  after(async () => {
    await harness?.close();
  });

  /** The bodies on Bob's page, in order on screen. */
  const bobSees = () => messages(bob).locator('.body').allTextContents();
  /** The stored history, oldest first. */
  async function stored(): Promise<string[]> {
    const { body } = await harness.app.request(2, 'GET', `/conversations/${directId}/messages?limit=100`);
    return (body.data as { body: string }[]).map((m) => m.body).reverse();
  }

  async function typingCleared(page: Page): Promise<void> {
    await page.waitForFunction(() => document.getElementById('typing-indicator')?.textContent === '', undefined, { timeout: 12_000 });
  }

  test('two sends in a row: both arrive once, in order, and Bob sees no one typing afterwards', async () => {
    const box = alice.locator('#composer-input');
    // A fast typist: text, Enter, text, Enter within one task (the second Enter before the first send's answer).
    await box.pressSequentially('first quick');
    await alice.evaluate(() => {
      const input = document.getElementById('composer-input') as HTMLTextAreaElement;
      for (const text of ['first quick one', 'second quick one']) {
        input.value = text;
        input.dispatchEvent(new Event('input', { bubbles: true }));
        input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
      }
    });
    assert.equal(await box.inputValue(), '', 'the composer is empty after the second Enter');
    await seeText(messages(bob).locator('.body'), 'second quick one');
    assert.deepEqual(await bobSees(), ['first quick one', 'second quick one']);
    assert.deepEqual(await stored(), ['first quick one', 'second quick one']);
    await typingCleared(bob);
    await alice.locator('.message.pending').first().waitFor({ state: 'detached' });
    assert.deepEqual(await messages(alice).locator('.body').allTextContents(), ['first quick one', 'second quick one']);
    assert.deepEqual(harness.pageErrors, []);
  });

  test('with 400 ms of latency: the message shows as sending at once, and text typed meanwhile is kept', async () => {
    // Every API request of Alice's page waits 400 ms before it goes out.
    await alice.route('**/api/chat/v1/**', async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      await route.continue();
    });
    const box = alice.locator('#composer-input');
    await box.pressSequentially('ok');
    await box.press('Enter');
    // At once: on screen as "Sending…", the box empty and editable.
    await alice.locator('.message.pending[data-state="sending"]', { hasText: 'ok' }).waitFor({ timeout: 300 });
    assert.equal(await box.inputValue(), '');
    await box.pressSequentially('one more thing');
    await box.press('Enter');
    await box.pressSequentially('and a third');
    await box.press('Enter');
    await box.pressSequentially('not sent yet');
    await seeText(messages(bob).locator('.body'), 'and a third');
    await alice.locator('.message.pending').first().waitFor({ state: 'detached' });
    assert.equal(await box.inputValue(), 'not sent yet', 'what was typed while the sends were on their way is all there');
    const expected = ['first quick one', 'second quick one', 'ok', 'one more thing', 'and a third'];
    assert.deepEqual(await bobSees(), expected);
    assert.deepEqual(await stored(), expected);
    assert.deepEqual(await messages(alice).locator('.body').allTextContents(), expected);
    await box.fill('');
    await typingCleared(bob);
    await alice.unroute('**/api/chat/v1/**');
    assert.deepEqual(harness.pageErrors, []);
  });

  test('a send answered 503 is tried again by itself with the same client_message_id: posted once, never "Failed"', async () => {
    const tries: string[] = [];
    await alice.route(`**/api/chat/v1/conversations/${directId}/messages`, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      tries.push((route.request().postDataJSON() as { client_message_id: string }).client_message_id);
      if (tries.length === 1) {
        return route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ message: 'Service unavailable.', code: 'service_unavailable' }) });
      }
      await route.continue();
    });
    const box = alice.locator('#composer-input');
    await box.fill('tried twice');
    await box.press('Enter');
    await seeText(messages(bob).locator('.body'), 'tried twice');
    await alice.locator('.message.pending', { hasText: 'tried twice' }).waitFor({ state: 'detached' });
    assert.equal(await alice.locator('.message.pending[data-state="failed"]').count(), 0);
    assert.equal(tries.length, 2);
    assert.equal(tries[0], tries[1], 'the same client_message_id both times');
    assert.equal((await stored()).filter((b) => b === 'tried twice').length, 1, 'posted once');
    await alice.unroute(`**/api/chat/v1/conversations/${directId}/messages`);
  });

  test('a failed send shows "Failed" with Retry, the composer stays free, and the retry posts it once', async () => {
    // The next send fails once (the server answers 500, which the client does not try again by itself), later ones go through.
    let failed = false;
    await alice.route(`**/api/chat/v1/conversations/${directId}/messages`, async (route) => {
      if (route.request().method() === 'POST' && !failed) {
        failed = true;
        return route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ message: 'Internal server error.', code: 'internal_error' }) });
      }
      await route.continue();
    });
    const box = alice.locator('#composer-input');
    await box.fill('will fail once');
    await box.press('Enter');
    const failedOne = alice.locator('.message.pending[data-state="failed"]', { hasText: 'will fail once' });
    await failedOne.waitFor();
    await seeText(failedOne, 'Failed');
    assert.equal(await box.inputValue(), '');
    await failedOne.getByRole('button', { name: 'Retry' }).click();
    await seeText(messages(bob).locator('.body'), 'will fail once');
    await failedOne.waitFor({ state: 'detached' });
    const history = await stored();
    assert.equal(history.filter((b) => b === 'will fail once').length, 1, 'posted once');
    await alice.unroute(`**/api/chat/v1/conversations/${directId}/messages`);
    // Console errors from the refused request are expected here; nothing else.
    assert.deepEqual(harness.pageErrors, []);
  });
});
