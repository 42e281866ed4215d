// Attachments in an S3-compatible bucket (s3rver, a real S3 REST server) shared by two Parley nodes on one
// PostgreSQL and one Redis: a file uploaded through one node is downloaded through the other, an outsider is
// refused on either; the per-user quota holds across concurrent uploads spread over both nodes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { Cluster } from '../../testkit/cluster.js';
import type { ParleyNode } from '../../testkit/parley-node.js';
import { S3TestServer } from '../../testkit/s3-server.js';

const MIB = 1024 * 1024;
const QUOTA = 8 * MIB;

async function upload(node: ParleyNode, userId: number, bytes: Uint8Array<ArrayBuffer>, name: string, type = 'application/octet-stream') {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type }), name);
  const res = await fetch(`${node.api}/attachments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await node.token(userId)}` },
    body: form,
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, body: (await res.json()) as { data?: { id: number; size: number }; code?: string; message?: string } };
}

async function download(node: ParleyNode, userId: number, id: number) {
  const res = await fetch(`${node.api}/attachments/${id}`, {
    headers: { authorization: `Bearer ${await node.token(userId)}` },
    signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

describe('attachments in one S3 bucket shared by two nodes', { timeout: 180_000 }, () => {
  let s3: S3TestServer;
  let cluster: Cluster;
  let node1: ParleyNode;
  let node2: ParleyNode;
  const objects = () => s3.objects();

  before(async () => {
    s3 = await S3TestServer.start();
    cluster = await Cluster.start({ nodes: 2, env: { ...s3.env(), CHAT_UPLOAD_QUOTA_BYTES: String(QUOTA) } });
    [node1, node2] = cluster.nodes as [ParleyNode, ParleyNode];
  });
  after(async () => {
    await cluster?.close();
    await s3?.close();
  });

  test('uploaded through node 1 (multipart, 6 MiB), downloaded through node 2 by a participant; an outsider gets 404', async () => {
    const [alice, bob, carol] = [8101, 8102, 8103];
    const bytes = Buffer.alloc(6 * MIB);
    for (let i = 0; i < bytes.length; i += 4) bytes.writeUInt32LE(i, i);
    const before = await objects();

    const uploaded = await upload(node1, alice, bytes, 'big.bin');
    assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
    const id = uploaded.body.data!.id;
    assert.equal(uploaded.body.data!.size, bytes.length);
    const added = (await objects()).filter((o) => !before.some((b) => b.key === o.key));
    assert.deepEqual(added.map((o) => o.size), [bytes.length], 'one object of the file\'s size in the bucket');
    assert.match(added[0]!.key, /^attachments\//);

    assert.equal((await node2.request(bob, 'GET', '/conversations')).status, 200);
    const conversation = await node1.request(alice, 'POST', '/conversations', { user_id: bob });
    const sent = await node1.request(alice, 'POST', `/conversations/${conversation.body.data.id}/messages`, { attachment_id: id });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));

    const got = await download(node2, bob, id);
    assert.equal(got.status, 200);
    assert.equal(got.headers.get('content-length'), String(bytes.length));
    assert.equal(got.headers.get('x-content-type-options'), 'nosniff');
    assert.ok(got.bytes.equals(bytes), 'the very bytes');
    assert.ok((await download(node1, alice, id)).bytes.equals(bytes), 'the uploader, on the other node');

    for (const node of [node1, node2]) {
      const refused = await download(node, carol, id);
      assert.equal(refused.status, 404);
      assert.equal(JSON.parse(refused.bytes.toString()).code, 'not_found');
    }
  });

  test('an image uploaded through node 1 gets its thumbnail in the bucket, served through node 2', async () => {
    const png = await sharp({ create: { width: 800, height: 400, channels: 3, background: '#3366cc' } }).png().toBuffer();
    const uploaded = await upload(node1, 8131, new Uint8Array(png), 'wide.png', 'image/png');
    assert.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
    const data = uploaded.body.data as unknown as { id: number; width: number; height: number; thumbnail_url: string };
    assert.deepEqual([data.width, data.height], [800, 400]);
    const res = await fetch(`${node2.baseUrl}${data.thumbnail_url}`, { headers: { authorization: `Bearer ${await node2.token(8131)}` } });
    assert.equal(res.status, 200);
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 320, 160]);
    const outsider = await fetch(`${node2.baseUrl}${data.thumbnail_url}`, { headers: { authorization: `Bearer ${await node2.token(8132)}` } });
    assert.equal(outsider.status, 404);
  });

  test('active content from the bucket is still served as a download, sandboxed', async () => {
    const uploaded = await upload(node1, 8111, Buffer.from('<script>alert(1)</script>'), 'x.html', 'text/html');
    assert.equal(uploaded.status, 201);
    const got = await download(node2, 8111, uploaded.body.data!.id);
    assert.equal(got.status, 200);
    assert.match(got.headers.get('content-disposition') ?? '', /^attachment;/);
    assert.equal(got.headers.get('content-security-policy'), 'sandbox');
  });

  test('quota: ten concurrent uploads of 3 MiB over both nodes; only what fits in 8 MiB is kept, the rest is 413 quota_exceeded', async () => {
    const user = 8121;
    const before = await objects();
    const file = Buffer.alloc(3 * MIB, 1);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => upload(i % 2 ? node2 : node1, user, file, `f${i}.bin`)));
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 201, ...Array<number>(8).fill(413)], JSON.stringify(results.map((r) => r.body)));
    for (const refused of results.filter((r) => r.status === 413)) {
      assert.equal(refused.body.code, 'quota_exceeded');
      assert.match(refused.body.message ?? '', /8388608 bytes/);
    }
    // Refused uploads leave nothing in the bucket.
    const added = (await objects()).filter((o) => !before.some((b) => b.key === o.key));
    assert.equal(added.length, 2);
    // Still over: a small file is refused too, before any byte is stored.
    const small = await upload(node1, user, Buffer.alloc(3 * MIB), 'one-more.bin');
    assert.equal(small.status, 413);
    assert.equal(small.body.code, 'quota_exceeded');
  });
});
