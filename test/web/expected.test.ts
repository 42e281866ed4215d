// The web client as people expect it, in Chromium: the empty inbox says how to start; links in messages are
// clickable and safe (http(s) only, a new tab without opener or referrer); a date divider above the day's
// messages; a run of one sender's messages grouped (one name, one avatar) with avatars beside others' messages
// in a group; a muted conversation's badge dimmed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { item, message, seeText, skip, startHarness, type Harness } from './browser.js';

describe('web client: what people expect', { skip }, () => {
  let harness: Harness;
  let alice: Page;

  before(async () => {
    harness = await startHarness();
    await harness.app.token(2, 'Bob');
    await harness.app.token(3, 'Carol');
    await harness.app.request(2, 'GET', '/conversations');
    await harness.app.request(3, 'GET', '/conversations');
    alice = await harness.openPage();
    await harness.signIn(alice, 1, 'Alice');
  });

  after(async () => {
    await harness?.close();
  });

  const api = (userId: number, method: string, path: string, body?: unknown) => harness.app.request(userId, method, path, body);

  test('the empty inbox says how to start', async () => {
    await seeText(alice.locator('#inbox-empty'), 'No conversations yet');
    await seeText(alice.locator('#inbox-empty'), /New chat.*find someone by name/);
  });

  test('links are clickable, open in a new tab without opener or referrer, and only http(s) ones', async () => {
    const { body } = await api(1, 'POST', '/conversations', { user_id: 2 });
    const id = body.data.id as number;
    await api(2, 'POST', `/conversations/${id}/messages`, { body: 'See https://example.com/a?b=1, or javascript:alert(1) and http://x.test/path.' });
    await item(alice, 'Bob').click();
    const text = message(alice, 'See https://example.com');
    await text.waitFor();
    const links = await text.locator('.body a').evaluateAll((as) => as.map((a) => ({ href: a.getAttribute('href'), text: a.textContent, target: a.getAttribute('target'), rel: a.getAttribute('rel') })));
    assert.deepEqual(links, [
      { href: 'https://example.com/a?b=1', text: 'https://example.com/a?b=1', target: '_blank', rel: 'noopener noreferrer' },
      { href: 'http://x.test/path', text: 'http://x.test/path', target: '_blank', rel: 'noopener noreferrer' },
    ]);
    assert.equal(await text.locator('.body').textContent(), 'See https://example.com/a?b=1, or javascript:alert(1) and http://x.test/path.', 'the text reads as sent');
  });

  test('a date divider above the day’s messages; one sender’s run grouped, with one name and one avatar in a group', async () => {
    const { body: created } = await api(1, 'POST', '/groups', { name: 'Hikers', user_ids: [2, 3] });
    const groupId = created.data.id as number;
    for (const [who, text] of [[2, 'first from Bob'], [2, 'second from Bob'], [3, 'Carol here']] as const) {
      await api(who, 'POST', `/conversations/${groupId}/messages`, { body: text });
    }
    await item(alice, 'Hikers').click();
    await message(alice, 'Carol here').waitFor();
    await seeText(alice.locator('.day-divider').first(), 'Today');
    const shape = async (text: string) =>
      message(alice, text).evaluate((li) => ({
        continued: li.classList.contains('continued'),
        avatar: li.querySelector('.message-avatar') !== null && getComputedStyle(li.querySelector('.message-avatar')!).visibility === 'visible',
        name: li.querySelector('.sender') !== null && getComputedStyle(li.querySelector('.sender')!).display !== 'none',
      }));
    assert.deepEqual(await shape('first from Bob'), { continued: false, avatar: true, name: true });
    assert.deepEqual(await shape('second from Bob'), { continued: true, avatar: false, name: false });
    assert.deepEqual(await shape('Carol here'), { continued: false, avatar: true, name: true });

    // Live: Carol's next message joins her run.
    await api(3, 'POST', `/conversations/${groupId}/messages`, { body: 'Carol again' });
    await message(alice, 'Carol again').waitFor();
    assert.deepEqual(await shape('Carol again'), { continued: true, avatar: false, name: false });
    assert.equal(await alice.locator('.day-divider').count(), 1, 'one divider for one day');
    assert.deepEqual(harness.pageErrors, []);
  });

  test('a muted conversation’s unread badge is dimmed, an unmuted one is not', async () => {
    const { body } = await api(1, 'POST', '/conversations', { user_id: 3 });
    const id = body.data.id as number;
    await alice.locator('.back').first().click().catch(() => {});
    await item(alice, 'Bob').click();
    await api(3, 'POST', `/conversations/${id}/messages`, { body: 'ping' });
    await item(alice, 'Carol').locator('.badge').waitFor();
    const background = () => item(alice, 'Carol').locator('.badge').evaluate((b) => getComputedStyle(b).backgroundColor);
    const loud = await background();
    assert.equal((await api(1, 'PUT', `/conversations/${id}/mute`, { until: null })).status, 200);
    await alice.reload();
    await alice.locator('.connection[data-state="connected"]').waitFor();
    await item(alice, 'Carol').locator('.badge').waitFor();
    assert.notEqual(await background(), loud, 'dimmed');
    assert.ok(await item(alice, 'Carol').evaluate((el) => el.classList.contains('muted-conversation')));
    assert.deepEqual(harness.pageErrors, []);
  });
});
