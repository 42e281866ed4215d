// Message search in the web client (GET /search/messages), in Chromium against a real Parley: results with the
// matched words marked, and a result opening its conversation at the message, loading older history when the
// message is not among the newest.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { message, messages, seeText, skip, startHarness, type Harness } from './browser.js';

describe('web client: message search', { skip }, () => {
  let harness: Harness;
  let alice: Page;
  let directId = 0;

  before(async () => {
    harness = await startHarness();
    await harness.app.token(1, 'Alice');
    await harness.app.token(2, 'Bob');
    await harness.app.request(1, 'GET', '/conversations'); // Alice signs in once, so Parley knows her
    const { body } = await harness.app.request(2, 'POST', '/conversations', { user_id: 1 });
    directId = body.data.id;
    assert.ok(directId > 0);
    // An old message about lunch, then 70 newer ones: the old one is two pages back in the history.
    await harness.app.request(2, 'POST', `/conversations/${directId}/messages`, { body: 'Lunch at the Café Müller on Friday?' });
    for (let i = 1; i <= 70; i++) await harness.app.request(2, 'POST', `/conversations/${directId}/messages`, { body: `Update ${i}` });
    await harness.app.request(1, 'POST', `/conversations/${directId}/messages`, { body: 'The cafe was closed, sadly' });
    alice = await harness.openPage();
    await harness.signIn(alice, 1, 'Alice');
  });

  after(async () => {
    await harness?.close();
  });

  const results = () => alice.locator('#search-results .search-result');

  test('results list the matching messages newest first, with the matched word beginnings marked', async () => {
    await alice.getByLabel('Search messages').fill('caf');
    await alice.getByLabel('Search messages').press('Enter');
    await seeText(alice.locator('.search-status'), '2 messages found for “caf”.');
    assert.deepEqual(await results().locator('.result-body').allTextContents(), ['The cafe was closed, sadly', 'Lunch at the Café Müller on Friday?']);
    // Accents ignored, and only the word beginnings that matched are marked.
    assert.deepEqual(await results().nth(0).locator('mark').allTextContents(), ['caf']);
    assert.deepEqual(await results().nth(1).locator('mark').allTextContents(), ['Caf']);
    await seeText(results().nth(1).locator('.result-head'), 'Bob');

    await alice.getByLabel('Search messages').fill('zebra');
    await alice.getByLabel('Search messages').press('Enter');
    await seeText(alice.locator('.search-status'), 'No messages found for “zebra”.');
    assert.equal(await results().count(), 0);
    assert.deepEqual(harness.pageErrors, []);
  });

  test('a result opens its conversation scrolled to the message, loading older history, and marks it for a moment', async () => {
    await alice.getByLabel('Search messages').fill('lunch fri');
    await alice.getByLabel('Search messages').press('Enter');
    await seeText(results(), 'Lunch at the Café Müller');
    assert.equal(await results().count(), 1);
    await results().first().click();
    const found = message(alice, 'Lunch at the Café Müller on Friday?');
    await found.waitFor();
    assert.match((await found.getAttribute('class')) ?? '', /\bfound\b/, 'marked');
    assert.ok(await found.evaluate((e) => {
      const box = e.getBoundingClientRect();
      const scroller = e.closest('.message-scroll')!.getBoundingClientRect();
      return box.top >= scroller.top && box.bottom <= scroller.bottom;
    }), 'scrolled into view');
    // History is whole between it and the newest message (loaded page by page, no gap).
    assert.equal(await messages(alice).count(), 72);
    await alice.waitForFunction(() => !document.querySelector('.message.found'), undefined, { timeout: 5_000 });
    // Closing the search brings the inbox back.
    await alice.getByRole('button', { name: 'Close search' }).click();
    await alice.locator('#inbox-list').waitFor();
    assert.equal(await alice.locator('#search-results').isVisible(), false);
    assert.deepEqual(harness.pageErrors, []);
  });
});
