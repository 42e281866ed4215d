// Images among attachments: width and height read on upload (as displayed, after the EXIF orientation), a WebP
// thumbnail of at most 320 px served at thumbnail_url under the file's access rule; a corrupt image is kept as a
// plain file without thumbnail (201, not a 500). Inputs are made with sharp here.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertKeys, ATTACHMENT_KEYS, direct, newUsers, send, upload } from './helpers.js';

const picture = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } });

for (const database of DATABASES) {
  describe(`attachment images (${database})`, { timeout: 120_000 }, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    const get = async (userId: number, url: string) => {
      const res = await fetch(`${app.baseUrl}${url}`, { headers: { authorization: `Bearer ${await app.token(userId)}` } });
      return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
    };

    const inputs: [string, string, () => Promise<Buffer>, number, number][] = [
      ['PNG', 'image/png', () => picture(1200, 800).png().toBuffer(), 1200, 800],
      ['JPEG', 'image/jpeg', () => picture(640, 2000).jpeg().toBuffer(), 640, 2000],
      ['WebP', 'image/webp', () => picture(300, 200).webp().toBuffer(), 300, 200],
    ];
    for (const [format, type, make, width, height] of inputs) {
      test(`${format}: width and height, and a WebP thumbnail of at most 320 px for participants only`, async () => {
        const [alice, bob, carol] = newUsers(3);
        const res = await upload(app, alice, new Uint8Array(await make()), `photo.${format.toLowerCase()}`, type);
        assert.equal(res.status, 201, JSON.stringify(res.body));
        const attachment = res.body.data;
        assertKeys(attachment, ATTACHMENT_KEYS, 'attachment');
        assert.equal(attachment.width, width);
        assert.equal(attachment.height, height);
        assert.equal(attachment.thumbnail_url, `${attachment.url}/thumbnail`);

        const conv = await direct(app, alice, bob);
        const message = await send(app, alice, conv, { attachment_id: attachment.id });
        assert.deepEqual(message.attachment, attachment, 'the message carries the same attachment object');

        const thumb = await get(bob, attachment.thumbnail_url);
        assert.equal(thumb.status, 200);
        assert.equal(thumb.headers.get('content-type'), 'image/webp');
        assert.equal(thumb.headers.get('x-content-type-options'), 'nosniff');
        const meta = await sharp(thumb.bytes).metadata();
        assert.equal(meta.format, 'webp');
        const scale = Math.min(1, 320 / Math.max(width, height));
        assert.equal(Math.max(meta.width, meta.height), Math.round(Math.max(width, height) * scale));
        assert.ok(Math.abs(meta.width / meta.height - width / height) < 0.02, 'the aspect ratio is kept');

        assert.equal((await get(carol, attachment.thumbnail_url)).status, 404, 'an outsider gets 404');
        assert.equal((await get(carol, attachment.url)).status, 404);
      });
    }

    test('a photo turned by EXIF orientation reports its size as displayed', async () => {
      const [alice] = newUsers(1);
      const jpeg = await picture(400, 100).jpeg().withMetadata({ orientation: 6 }).toBuffer();
      const res = await upload(app, alice, new Uint8Array(jpeg), 'turned.jpg', 'image/jpeg');
      assert.equal(res.status, 201);
      assert.deepEqual([res.body.data.width, res.body.data.height], [100, 400]);
      const meta = await sharp((await get(alice, res.body.data.thumbnail_url)).bytes).metadata();
      assert.deepEqual([meta.width, meta.height], [80, 320]);
    });

    test('a corrupt image is stored as a file without dimensions or thumbnail, not a 500', async () => {
      const [alice] = newUsers(1);
      const png = await picture(500, 500).png().toBuffer();
      const corrupt = Buffer.concat([png.subarray(0, 60), Buffer.alloc(400, 0xab)]);
      const res = await upload(app, alice, new Uint8Array(corrupt), 'broken.png', 'image/png');
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.deepEqual([res.body.data.width, res.body.data.height, res.body.data.thumbnail_url], [null, null, null]);
      const file = await get(alice, res.body.data.url);
      assert.equal(file.status, 200);
      assert.ok(file.bytes.equals(corrupt), 'the bytes as sent');
      const thumb = await fetch(`${app.api}/attachments/${res.body.data.id}/thumbnail`, { headers: { authorization: `Bearer ${await app.token(alice)}` } });
      assert.equal(thumb.status, 404);
      assert.equal(((await thumb.json()) as { code: string }).code, 'not_found');
    });

    test('an SVG (or another format sharp reads) sent as a raster type is not rendered: a plain file, no thumbnail', async () => {
      const [alice] = newUsers(1);
      const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="50"><rect width="100" height="50" fill="red"/></svg>';
      const tiff = await picture(60, 40).tiff().toBuffer();
      for (const [bytes, type] of [[Buffer.from(svg), 'image/png'], [Buffer.from(svg), 'image/webp'], [tiff, 'image/jpeg']] as const) {
        const res = await upload(app, alice, new Uint8Array(bytes), 'picture', type);
        assert.equal(res.status, 201, JSON.stringify(res.body));
        assert.deepEqual([res.body.data.width, res.body.data.height, res.body.data.thumbnail_url], [null, null, null], type);
        const file = await get(alice, res.body.data.url);
        assert.ok(file.bytes.equals(bytes), 'the bytes as sent');
      }
      // The real formats behind another raster type still are images (a JPEG sent as image/png).
      const jpeg = await upload(app, alice, new Uint8Array(await picture(30, 20).jpeg().toBuffer()), 'photo', 'image/png');
      assert.deepEqual([jpeg.body.data.width, jpeg.body.data.height], [30, 20]);
      const avif = await upload(app, alice, new Uint8Array(await picture(30, 20).avif().toBuffer()), 'photo.avif', 'image/avif');
      assert.deepEqual([avif.body.data.width, avif.body.data.height], [30, 20]);
    });

    test('a file that is not an image has null width, height and thumbnail_url', async () => {
      const res = await upload(app, newUsers(1)[0]!, 'plain text', 'a.txt', 'text/plain');
      assert.equal(res.status, 201);
      assert.deepEqual([res.body.data.width, res.body.data.height, res.body.data.thumbnail_url], [null, null, null]);
    });
  });
}
