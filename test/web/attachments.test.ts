// Attachments in the web client: a picked image is previewed in the composer before anything is uploaded, the
// pending message shows the upload's progress, the other page shows the server's thumbnail in a box of its final
// size reserved before the thumbnail arrives (no layout shift), and a click opens the original in a dialog.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { item, message, messages, openDirectPair, skip, startHarness, type Harness } from './browser.js';

/** A 1200 × 800 PNG: a timeline box of 288 × 192 (the client's 288 × 256 limit), a 320 × 213 thumbnail. */
async function photo(): Promise<Buffer> {
  return sharp({ create: { width: 1200, height: 800, channels: 3, background: { r: 40, g: 120, b: 200 } } }).png().toBuffer();
}

describe('web client: attachments', { skip }, () => {
  let harness: Harness;
  let alice: Page;
  let bob: Page;

  before(async () => {
    harness = await startHarness();
    ({ alice, bob } = await openDirectPair(harness));
  });

  after(async () => {
    await harness?.close();
  });

  /** The rendered size of the first element a locator matches, in CSS pixels. */
  async function size(page: Page, selector: string): Promise<{ width: number; height: number }> {
    const box = await page.locator(selector).last().boundingBox();
    assert.ok(box, `${selector} is on screen`);
    return { width: Math.round(box.width), height: Math.round(box.height) };
  }

  test('a picked image is previewed in the composer, and the pending message shows the upload progress', async () => {
    await alice.locator('#composer-file').setInputFiles({ name: 'harbour.png', mimeType: 'image/png', buffer: await photo() });
    const preview = alice.locator('.composer-preview');
    await preview.waitFor();
    // Read from the local file: the preview decodes at the file's own size before any upload.
    assert.equal(await preview.evaluate((img) => (img as HTMLImageElement).decode().then(() => (img as HTMLImageElement).naturalWidth)), 1200);

    // Hold the upload's answer, so the pending message can be looked at while it uploads.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await alice.route('**/api/chat/v1/attachments', async (route) => {
      await held;
      await route.continue();
    });
    await alice.locator('#composer-input').fill('The harbour');
    await alice.locator('#composer-input').press('Enter');
    const pending = alice.locator('.message.pending');
    await pending.locator('.composer-preview').waitFor();
    await pending.getByRole('progressbar', { name: 'Uploading harbour.png' }).waitFor();
    assert.equal(await alice.locator('form.composer .composer-preview').count(), 0, 'the composer is free for the next message');
    release();
    await message(alice, 'The harbour').locator('img.attachment-image').waitFor();
    assert.equal(await pending.count(), 0, 'the pending message is replaced by the sent one');
    await alice.unroute('**/api/chat/v1/attachments');
  });

  test("the other page reserves the image's box before its thumbnail arrives, shows the thumbnail, and opens the original on click", async () => {
    const photoMessage = message(bob, 'The harbour');
    // Bob's page got the message live; reload with the thumbnail held back to see the box before it loads.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const thumbnails: string[] = [];
    await bob.route('**/api/chat/v1/attachments/*/thumbnail', async (route) => {
      thumbnails.push(route.request().url());
      await held;
      await route.continue();
    });
    await bob.reload();
    await bob.locator('.connection[data-state="connected"]').waitFor();
    await item(bob, 'Alice').click();
    const image = photoMessage.locator('img.attachment-image');
    await image.waitFor();
    assert.equal(await image.evaluate((img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth > 0), false, 'not loaded yet');
    const before = await size(bob, '#message-list img.attachment-image');
    assert.deepEqual(before, { width: 288, height: 192 }, 'the box has the image’s final size before a byte of it arrived');
    release();
    await bob.waitForFunction(() => {
      const img = [...document.querySelectorAll<HTMLImageElement>('#message-list img.attachment-image')].pop();
      return img !== undefined && img.complete && img.naturalWidth > 0;
    });
    assert.deepEqual(await size(bob, '#message-list img.attachment-image'), before, 'no layout shift when the thumbnail loads');
    assert.equal(await image.evaluate((img) => (img as HTMLImageElement).naturalWidth), 320, 'the thumbnail (at most 320 px), not the original');
    assert.equal(thumbnails.length, 1, 'the thumbnail was fetched once');
    await bob.unroute('**/api/chat/v1/attachments/*/thumbnail');

    await photoMessage.getByRole('button', { name: 'Open harbour.png' }).click();
    const dialog = bob.getByRole('dialog', { name: 'harbour.png' });
    await dialog.waitFor();
    const original = dialog.locator('img.original-image');
    await bob.waitForFunction(() => (document.querySelector('dialog img.original-image') as HTMLImageElement | null)?.naturalWidth === 1200);
    assert.equal(await original.getAttribute('alt'), 'harbour.png');
    await bob.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  });

  test('a file that is not an image shows as a chip, before sending and after', async () => {
    await alice.locator('#composer-file').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('minutes of the meeting') });
    await alice.locator('.file-chip', { hasText: 'notes.txt' }).first().waitFor();
    assert.equal(await alice.locator('.composer-preview').count(), 0, 'no image preview for a text file');
    await alice.locator('#composer-input').fill('The notes');
    await alice.locator('#composer-input').press('Enter');
    await message(bob, 'The notes').locator('.file-button', { hasText: 'notes.txt' }).waitFor();
    assert.ok((await messages(bob).count()) >= 2);
  });
});
