// Catching up in the web client (GET /api/chat/v1/sync), in Chromium against a real Parley: Alice and Bob in two
// browser windows (two contexts). Socket events are at-most-once, so what a window missed must come from the
// change feed: when its socket is back after the network went away, and before it shows a conversation whose
// channel it was not listening to. The rule checked: without a reload, the window shows what a reload shows.
// Alice acts through her own window, as a person does; Bob's window is compared with a freshly signed-in one.
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { item, message, seeText, skip, startHarness, type Harness } from './browser.js';

/** What Bob sees of the open conversation, the inbox and the group settings: the texts a reload must agree with. */
interface Seen {
  title: string;
  subtitle: string;
  /** Each message still in the conversation (placeholders of deleted ones, shown only to a window that saw the
   * deletion, are not part of it). */
  messages: { sender: string | null; body: string; edited: boolean; reactions: string[]; receipt: string | null }[];
  /** The timeline: the messages' bodies and the group notices ("Alice removed Carol") between them, in order. */
  timeline: string[];
  inbox: string[];
}

/** Polls until `check` stops throwing (an expect-style wait on the DOM), at most `timeout` ms. */
async function eventually<T>(check: () => Promise<T>, timeout = 6_000): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

// (No named functions inside page.evaluate: tsx's transform would wrap them in a helper the page does not have.)
function seen(page: Page): Promise<Seen> {
  return page.evaluate(() => ({
    title: document.querySelector('#thread-title')?.textContent?.trim() ?? '',
    subtitle: document.querySelector('#thread-subtitle')?.textContent?.trim() ?? '',
    messages: [...document.querySelectorAll('#message-list .message:not(.deleted):not(.pending)')].map((m) => ({
      sender: m.querySelector('.sender')?.textContent?.trim() ?? null,
      body: m.querySelector('.body')?.textContent?.trim() ?? '',
      edited: m.querySelector('.edited') !== null,
      reactions: [...m.querySelectorAll('.reaction')].map((r) => `${r.getAttribute('aria-label')} (${r.getAttribute('title')})`),
      receipt: m.querySelector('.receipt')?.textContent?.trim() ?? null,
    })),
    timeline: [...document.querySelectorAll('#message-list .message:not(.deleted):not(.pending) .body, #message-list .system-note')].map((e) =>
      e.classList.contains('system-note') ? `notice: ${e.textContent?.trim()}` : (e.textContent?.trim() ?? ''),
    ),
    inbox: [...document.querySelectorAll('.conversation-item')].map((i) => i.textContent?.trim() ?? ''),
  }));
}

/** The actions each message offers (Reply, React, Forward, Edit, Delete): they depend on my role in a group. */
function actionsSeen(page: Page): Promise<string[][]> {
  return page
    .locator('#message-list .message:not(.deleted):not(.pending)')
    .evaluateAll((items) => items.map((m) => [...m.querySelectorAll('.actions button.action')].map((b) => b.getAttribute('aria-label') ?? '')));
}

/** The group settings dialog as Bob sees it: each member's row (name and role) and what he may do. */
async function settingsSeen(page: Page): Promise<{ heading: string; members: string[]; canRename: boolean; canAdd: boolean }> {
  await page.getByRole('button', { name: 'Group settings' }).click();
  const dialog = page.locator('dialog[open]');
  await dialog.locator('.member').first().waitFor();
  const result = await dialog.evaluate((d) => ({
    heading: d.querySelector('#settings-members-heading')?.textContent ?? '',
    members: [...d.querySelectorAll('.member')].map((m) => {
      const role = m.querySelector<HTMLSelectElement>('select')?.value ?? m.querySelector('.role')?.textContent;
      return `${m.querySelector('.member-name')?.textContent}: ${role}`;
    }),
    canRename: d.querySelector('#settings-rename') !== null,
    canAdd: d.querySelector('#settings-add') !== null,
  }));
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  return result;
}

describe('web client: catching up over GET /sync', { skip }, () => {
  let harness: Harness;
  let alice: Page;
  let bob: Page;
  let tripId = 0;
  let clubId = 0;
  /** The server's ends of Bob's WebSocket connections (those opened while his window signed in). */
  const bobSockets: Socket[] = [];
  let collecting: Socket[] | null = null;

  /** A fresh window of Bob's (a new sign-in: nothing but what the server says now) with one conversation open. */
  async function reloadedBob(title: string): Promise<Page> {
    const page = await harness.openPage();
    await harness.signIn(page, 2, 'Bob');
    await item(page, title).click();
    await seeText(page.locator('#thread-title'), title);
    await page.locator('#message-list').waitFor({ state: 'attached' });
    return page;
  }

  /** Chromium logs the WebSocket attempts that fail while a window is offline: not page errors. */
  const pageErrors = () => harness.pageErrors.filter((e) => !/^WebSocket connection to .* failed/.test(e));

  before(async () => {
    harness = await startHarness();
    const app = harness.app;
    await app.token(1, 'Alice');
    await app.token(2, 'Bob');
    await app.token(3, 'Carol');
    await app.token(4, 'Dave');
    for (const user of [2, 3, 4]) await app.request(user, 'GET', '/conversations'); // Parley knows them once they used the API

    const trip = await app.request(1, 'POST', '/groups', { name: 'Weekend trip', user_ids: [2, 3] });
    assert.equal(trip.status, 201, JSON.stringify(trip.body));
    tripId = trip.body.data.id;
    for (const body of ['Meet at the station at 9', 'Bring snacks', 'Train leaves at 10:15']) {
      assert.equal((await app.request(1, 'POST', `/conversations/${tripId}/messages`, { body })).status, 201);
    }
    assert.equal((await app.request(2, 'POST', `/conversations/${tripId}/messages`, { body: 'I will bring a map' })).status, 201);
    await app.request(3, 'POST', `/conversations/${tripId}/read`);

    const club = await app.request(1, 'POST', '/groups', { name: 'Book club', user_ids: [2, 3, 4] });
    assert.equal(club.status, 201, JSON.stringify(club.body));
    clubId = club.body.data.id;
    assert.equal((await app.request(4, 'POST', `/conversations/${clubId}/messages`, { body: 'Next book: Dune?' })).status, 201);

    alice = await harness.openPage();
    bob = await harness.openPage();
    await harness.signIn(alice, 1, 'Alice');
    harness.app.app.http.server.prependListener('upgrade', (_request, socket: Socket) => collecting?.push(socket));
    collecting = bobSockets;
    await harness.signIn(bob, 2, 'Bob');
    collecting = null;
    assert.equal(bobSockets.length, 1, 'one WebSocket for Bob\'s window');
    await item(alice, 'Weekend trip').click();
    await item(bob, 'Weekend trip').click();
    await seeText(bob.locator('#thread-subtitle'), /^3 members/);
    await message(bob, 'I will bring a map').locator('.receipt', { hasText: /Seen by .*Alice/ }).waitFor();
    await message(bob, 'I will bring a map').locator('.receipt', { hasText: /Seen by .*Carol/ }).waitFor();
  });

  after(async () => {
    await harness?.close();
  });

  test('what changed while my window was offline shows once it is back online, as after a reload', async () => {
    // Bob's window loses the network: its socket drops, and the sidebar says so. (An offline Chromium keeps an
    // open WebSocket until a ping goes unanswered, up to half a minute; a network that goes away also ends the
    // connection at the server's end, so the test ends it there, and the offline window cannot reconnect.)
    await bob.context().setOffline(true);
    for (const socket of bobSockets) socket.destroy();
    await bob.locator('.connection:not([data-state="connected"])').waitFor();
    assert.notEqual(await bob.locator('.connection').textContent(), 'Live');

    // Meanwhile Alice, in her window: edits a message, deletes another, reacts to a third, writes a new one…
    await message(alice, 'Meet at the station at 9').hover();
    await message(alice, 'Meet at the station at 9').getByRole('button', { name: 'Edit message from Alice' }).click();
    await alice.locator('#composer-input').fill('Meet at the station at 8:45');
    await alice.locator('#composer-input').press('Enter');
    await message(alice, 'Meet at the station at 8:45').locator('.edited').waitFor();

    await message(alice, 'Bring snacks').hover();
    await message(alice, 'Bring snacks').getByRole('button', { name: 'Delete message from Alice' }).click();
    await alice.locator('dialog[open]').getByRole('button', { name: 'Delete' }).click();
    await message(alice, 'Bring snacks').waitFor({ state: 'detached' });

    await message(alice, 'Train leaves at 10:15').hover();
    await message(alice, 'Train leaves at 10:15').getByRole('button', { name: 'React to message from Alice' }).click();
    await alice.getByRole('button', { name: 'React with 🎉' }).click();
    await seeText(message(alice, 'Train leaves at 10:15').locator('.reaction[data-emoji="🎉"]'), '1');

    await alice.locator('#composer-input').fill('See you all there');
    await alice.locator('#composer-input').press('Enter');
    await message(alice, 'See you all there').locator('time').waitFor();

    // …makes Bob an admin and removes Carol, in the group's settings.
    await alice.getByRole('button', { name: 'Group settings' }).click();
    const settings = alice.locator('dialog[open]');
    await settings.getByLabel('Role of Bob').selectOption('admin');
    await settings.locator('.member[data-user-id="2"] select').locator('option[value="admin"]:checked').waitFor({ state: 'attached' });
    await settings.getByRole('button', { name: 'Remove Carol' }).click();
    await alice.locator('dialog[open]').getByRole('button', { name: 'Remove', exact: true }).click();
    await settings.locator('.member[data-user-id="3"]').waitFor({ state: 'detached' });
    await alice.keyboard.press('Escape');
    await seeText(alice.locator('#thread-subtitle'), /^2 members/);

    // None of it reached Bob's window: it is still offline.
    assert.equal(await message(bob, 'Meet at the station at 9').count(), 1);
    assert.equal(await message(bob, 'See you all there').count(), 0);
    assert.notEqual(await bob.locator('.connection').textContent(), 'Live');

    // Bob's window is back online: the socket reconnects, and without a reload it shows all of it.
    await bob.context().setOffline(false);
    await seeText(bob.locator('.connection[data-state="connected"]'), 'Live');
    await message(bob, 'Meet at the station at 8:45').locator('.edited').waitFor();
    await message(bob, 'Meet at the station at 9').waitFor({ state: 'detached' });
    await message(bob, 'Bring snacks').waitFor({ state: 'detached' });
    await seeText(message(bob, 'Train leaves at 10:15').locator('.reaction[data-emoji="🎉"]'), '1');
    await message(bob, 'See you all there').waitFor();
    await seeText(bob.locator('#thread-subtitle'), '2 members: Alice, you');
    await seeText(message(bob, 'I will bring a map').locator('.receipt'), /^Seen by Alice$/);
    assert.equal(await bob.locator('#message-list .body', { hasText: 'Bring snacks' }).count(), 0, 'the deleted text is gone');
    const bobSettings = await settingsSeen(bob);
    assert.ok(bobSettings.members.some((m) => m === 'Bob (you) #2: Admin'), JSON.stringify(bobSettings.members));
    assert.ok(!bobSettings.members.some((m) => m.startsWith('Carol')), JSON.stringify(bobSettings.members));

    // And it is exactly what a fresh window of Bob's shows.
    const fresh = await reloadedBob('Weekend trip');
    await seeText(fresh.locator('#thread-subtitle'), /^2 members/);
    await message(fresh, 'See you all there').waitFor();
    await message(fresh, 'I will bring a map').locator('.receipt').waitFor();
    const reference = await seen(fresh);
    assert.ok(reference.timeline.includes('notice: Alice removed Carol'), `a reload shows the group's notices: ${JSON.stringify(reference.timeline)}`);
    await eventually(async () => assert.deepEqual(await seen(bob), reference));
    assert.deepEqual(bobSettings, await settingsSeen(fresh));
    await fresh.context().close();
    assert.deepEqual(pageErrors(), []);
  });

  test(
    'my new role caught up also changes what I may do: as an admin I may delete the others’ messages, as after a reload',
    async () => {
      await seeText(bob.locator('#thread-title'), 'Weekend trip');
      const fresh = await reloadedBob('Weekend trip');
      try {
        await message(fresh, 'See you all there').waitFor();
        const reference = await actionsSeen(fresh);
        assert.ok(reference[0]?.includes('Delete message from Alice'), `a fresh window lets admin Bob delete Alice's message: ${JSON.stringify(reference)}`);
        await eventually(async () => assert.deepEqual(await actionsSeen(bob), reference), 2_000);
      } finally {
        await fresh.context().close();
      }
    },
  );

  test('a conversation I was not watching is caught up before it shows: its current name and members', async () => {
    // Bob stays in "Weekend trip", online. Alice renames "Book club" and removes Dave from it.
    await seeText(bob.locator('.connection'), 'Live');
    // (She waits for her window to mark Dave's message read: the settings dialog is drawn again on any change
    // of the conversation, and that would put back the old name she is typing.)
    const read = alice.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(`/conversations/${clubId}/read`));
    await item(alice, 'Book club').click();
    await seeText(alice.locator('#thread-title'), 'Book club');
    await read;
    await alice.getByRole('button', { name: 'Group settings' }).click();
    const settings = alice.locator('dialog[open]');
    await settings.getByLabel('Group name').fill('Reading circle');
    await settings.getByRole('button', { name: 'Rename' }).click();
    await seeText(alice.locator('#thread-title'), 'Reading circle');
    await settings.getByRole('button', { name: 'Remove Dave' }).click();
    await alice.locator('dialog[open]').getByRole('button', { name: 'Remove', exact: true }).click();
    await settings.locator('.member[data-user-id="4"]').waitFor({ state: 'detached' });
    await alice.keyboard.press('Escape');
    await seeText(alice.locator('#thread-subtitle'), /^3 members/);

    // Bob opens it from his inbox: the header has the new name and the members as they are now.
    await seeText(bob.locator('#thread-title'), 'Weekend trip');
    await item(bob, 'Reading circle').click();
    await seeText(bob.locator('#thread-title'), 'Reading circle');
    await seeText(bob.locator('#thread-subtitle'), /^3 members: /);
    await message(bob, 'Next book: Dune?').waitFor();
    const subtitle = (await bob.locator('#thread-subtitle').textContent()) ?? '';
    assert.doesNotMatch(subtitle, /Dave/);
    assert.match(subtitle, /Alice/);
    assert.match(subtitle, /Carol/);
    assert.equal(await bob.locator('.thread').getAttribute('data-conversation-id'), String(clubId));

    // As a fresh window shows it.
    const fresh = await reloadedBob('Reading circle');
    await message(fresh, 'Next book: Dune?').waitFor();
    const reference = await seen(fresh);
    await eventually(async () => assert.deepEqual(await seen(bob), reference));
    assert.deepEqual(await settingsSeen(bob), await settingsSeen(fresh));
    await fresh.context().close();
    assert.deepEqual(pageErrors(), []);
  });
});
