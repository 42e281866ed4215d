// The web client's everyday details: the hover toolbar sits above a message, never over its first line; a
// deleted message leaves a placeholder; an error is said once and its notice does not cover the composer; Up in
// an empty composer edits your last message; Esc closes a dialog; at phone width the conversation header keeps
// its title and member count (its buttons become icons); dark mode follows prefers-color-scheme.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { item, message, openDirectPair, seeText, skip, startHarness, type Harness } from './browser.js';

/** The rectangle of the first element a selector matches, inside the page. */
async function rect(page: Page, selector: string): Promise<{ top: number; bottom: number; left: number; right: number; width: number }> {
  return page.locator(selector).first().evaluate((el) => {
    const r = el.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width };
  });
}

const overlap = (a: { top: number; bottom: number; left: number; right: number }, b: typeof a) =>
  a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

describe('web client: details', { skip }, () => {
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

  async function say(page: Page, text: string): Promise<void> {
    await page.locator('#composer-input').fill(text);
    await page.locator('#composer-input').press('Enter');
    await message(page, text).waitFor();
  }

  test('the hover toolbar is above the message, clear of its first line', async () => {
    await say(alice, 'Is the toolbar in the way?');
    const target = message(bob, 'Is the toolbar in the way?');
    await target.waitFor();
    await target.hover();
    await bob.waitForFunction(() => {
      const bar = [...document.querySelectorAll('#message-list .message')].pop()?.querySelector('.actions');
      return bar !== undefined && bar !== null && getComputedStyle(bar).opacity === '1';
    });
    const id = await target.getAttribute('id');
    const bar = await rect(bob, `#${id} .actions`);
    const body = await rect(bob, `#${id} .body`);
    assert.ok(bar.bottom <= body.top + 0.5, `toolbar bottom ${bar.bottom} is above the text's top ${body.top}`);
  });

  test('a deleted message leaves a placeholder where it was, live and for the one who deleted it', async () => {
    await say(alice, 'first of three');
    await say(alice, 'this one goes');
    await say(alice, 'third of three');
    await message(bob, 'third of three').waitFor();
    const doomed = await message(bob, 'this one goes').getAttribute('data-id');
    assert.equal((await harness.app.request(1, 'DELETE', `/messages/${doomed}`)).status, 204);
    await seeText(bob.locator(`#message-${doomed}`), 'Alice deleted this message');
    const order = await bob.locator('#message-list .message').evaluateAll((items) => items.slice(-3).map((li) => li.textContent ?? ''));
    assert.match(order[0]!, /first of three/);
    assert.match(order[1]!, /Alice deleted this message/);
    assert.match(order[2]!, /third of three/);
    await seeText(alice.locator(`#message-${doomed}`), 'You deleted this message');
    assert.equal(await bob.locator(`#message-${doomed} .actions`).count(), 0, 'nothing to reply to or react to');
  });

  test('a too-long edit is refused with its reason said once, in a notice clear of the composer', async () => {
    await say(alice, 'short enough');
    await alice.locator('#composer-input').click();
    await alice.locator('#composer-input').press('ArrowUp');
    assert.equal(await alice.locator('#composer-input').inputValue(), 'short enough', 'Up in an empty composer edits the last message');
    await seeText(alice.locator('.composer-banner'), 'Editing message');
    await alice.locator('#composer-input').fill('x'.repeat(10_001));
    await alice.locator('#composer-input').press('Enter');
    const notice = alice.locator('#toasts .toast').last();
    await notice.waitFor();
    const text = (await notice.textContent()) ?? '';
    assert.equal(text.match(/10000 characters/g)?.length, 1, `said once: ${text}`);
    assert.ok(!overlap(await rect(alice, '#toasts .toast'), await rect(alice, 'form.composer')), 'the notice does not cover the composer');
    await alice.locator('#composer-input').press('Escape');
  });

  test('Esc closes a dialog', async () => {
    await harness.app.request(3, 'GET', '/conversations'); // Carol is known once she has used the API
    const { status, body } = await harness.app.request(1, 'POST', '/groups', { name: 'Weekend plans', user_ids: [2, 3] });
    assert.equal(status, 201, JSON.stringify(body));
    await item(alice, 'Weekend plans').click();
    await alice.getByRole('button', { name: 'Group settings' }).click();
    const dialog = alice.getByRole('dialog');
    await dialog.waitFor();
    await alice.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.ok(body.data.id > directId, JSON.stringify(body));
  });

  test("at phone width the header keeps the group's title and member count; its buttons are labelled icons", async () => {
    await alice.setViewportSize({ width: 375, height: 740 }); // the group opened in the test before stays open
    await alice.locator('#thread-title', { hasText: 'Weekend plans' }).waitFor();
    const title = await alice.locator('#thread-title').evaluate((el) => ({ full: el.scrollWidth <= el.clientWidth, text: el.textContent }));
    assert.deepEqual(title, { full: true, text: 'Weekend plans' }, 'the title is not cut');
    const subtitle = await alice.locator('#thread-subtitle').evaluate((el) => {
      // The visible part of the subtitle: at least "3 members" must fit.
      const probe = document.createElement('span');
      probe.textContent = '3 members';
      probe.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap;font:inherit';
      el.append(probe);
      const needed = probe.getBoundingClientRect().width;
      probe.remove();
      return { visible: el.clientWidth, needed };
    });
    assert.ok(subtitle.visible >= subtitle.needed, `"3 members" fits (${subtitle.visible} ≥ ${subtitle.needed} px)`);
    const settings = alice.getByRole('button', { name: 'Group settings' });
    assert.ok((await settings.boundingBox())!.width <= 48, 'an icon button');
    assert.equal(await settings.getAttribute('title'), 'Group settings');
    await alice.setViewportSize({ width: 1180, height: 760 });
  });

  // The web client uses the platform's colour emoji font and downloads none: on a machine without one (Debian:
  // apt-get install fonts-noto-color-emoji; .ci/run installs it) there is nothing to check.
  const colourEmojiFont = spawnSync('fc-list', [':', 'family'], { encoding: 'utf8' }).stdout?.toLowerCase().includes('color emoji') === true;
  test('emoji in a message draw with the colour emoji font, not a text font’s black-and-white glyph', { skip: colourEmojiFont ? false : 'no colour emoji font installed (fonts-noto-color-emoji)' }, async () => {
    await say(bob, 'Love it 😍');
    // The fonts Chromium really used for the element's text, from the DevTools protocol. The list may draw the
    // message again (its send confirmed) between finding the element and asking for its fonts: then ask again.
    const cdp = await bob.context().newCDPSession(bob);
    await cdp.send('DOM.enable');
    await cdp.send('CSS.enable');
    const fontsOfMessage = async () => {
      await bob.locator('#message-list .body', { hasText: 'Love it' }).last().evaluate((el) => (el.id = 'emoji-probe'));
      const { root } = await cdp.send('DOM.getDocument', { depth: -1 });
      const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector: '#emoji-probe' });
      return (await cdp.send('CSS.getPlatformFontsForNode', { nodeId })).fonts;
    };
    let fonts: Awaited<ReturnType<typeof fontsOfMessage>> | undefined;
    for (let attempt = 1; fonts === undefined; attempt++) {
      try {
        fonts = await fontsOfMessage();
      } catch (err) {
        if (attempt === 5 || !/Could not find node|No node with given id/.test((err as Error).message)) throw err;
        await bob.waitForTimeout(100);
      }
    }
    const emojiFont = fonts.find((f) => /emoji/i.test(f.familyName));
    assert.ok(emojiFont, `an emoji font drew the emoji: ${JSON.stringify(fonts)}`);
    assert.equal(fonts.filter((f) => !/emoji/i.test(f.familyName)).reduce((n, f) => n + f.glyphCount, 0), 'Love it '.length, 'the text font drew only the words');
    await cdp.detach();
  });

  test('dark mode follows prefers-color-scheme', async () => {
    await bob.emulateMedia({ colorScheme: 'dark' });
    const css = await bob.evaluate(() => ({
      background: getComputedStyle(document.body).backgroundColor,
      header: getComputedStyle(document.querySelector('.thread-header')!).backgroundColor,
      text: getComputedStyle(document.body).color,
    }));
    const luminance = (color: string) => {
      const [r, g, b] = (color.match(/\d+(\.\d+)?/g) ?? ['0', '0', '0']).map(Number);
      return (0.2126 * r! + 0.7152 * g! + 0.0722 * b!) / 255;
    };
    const colors = { background: luminance(css.background), header: luminance(css.header), text: luminance(css.text) };
    assert.ok(colors.background < 0.25 && colors.header < 0.3, `dark surfaces: ${JSON.stringify(colors)}`);
    assert.ok(colors.text > 0.7, 'light text');
    await bob.emulateMedia({ colorScheme: 'light' });
  });
});
