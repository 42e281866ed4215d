// The attachment stores: local disk and an S3-compatible bucket (a real s3rver). Both keep a file byte for
// byte whatever its size (one PUT under 5 MiB, multipart parts of 5 MiB above, an exact multiple of the part
// size, an empty file), and keep nothing when the upload's stream fails part-way.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs, { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { localDiskStorage, PART_SIZE, s3Storage, type AttachmentStorage } from '../../src/store/attachment-storage.js';
import { S3TestServer } from '../../testkit/s3-server.js';

/** The bytes as a stream of 64 KiB chunks, like a multipart upload's file stream. */
function chunked(bytes: Buffer, failAfter?: number): Readable {
  let offset = 0;
  return new Readable({
    read() {
      if (failAfter !== undefined && offset >= failAfter) {
        this.destroy(new Error('the client went away'));
        return;
      }
      if (offset >= bytes.length) {
        this.push(null);
        return;
      }
      this.push(bytes.subarray(offset, offset + 65_536));
      offset += 65_536;
    },
  });
}

async function readAll(storage: AttachmentStorage, key: string): Promise<Buffer> {
  const file = await storage.open(key);
  assert.ok(file, 'the file is stored');
  const chunks: Buffer[] = [];
  for await (const chunk of file.stream) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  assert.equal(file.size, bytes.length, 'the size told is the size read');
  return bytes;
}

const SIZES: [string, number][] = [
  ['an empty file', 0],
  ['a small file (one PUT)', 100_000],
  ['exactly two parts', 2 * PART_SIZE],
  ['two parts and a remainder', 2 * PART_SIZE + 12_345],
];

function contract(name: string, setUp: () => Promise<{ storage: AttachmentStorage; stored: () => Promise<number>; close: () => Promise<void> }>): void {
  describe(`attachment storage: ${name}`, { timeout: 60_000 }, () => {
    let storage: AttachmentStorage;
    let stored: () => Promise<number>;
    let close: () => Promise<void>;
    before(async () => {
      ({ storage, stored, close } = await setUp());
    });
    after(async () => {
      await close?.();
    });

    for (const [label, size] of SIZES) {
      test(`${label}: stored and read back byte for byte`, async () => {
        const bytes = randomBytes(size);
        const { key, size: told } = await storage.put(chunked(bytes));
        assert.equal(told, size);
        assert.ok((await readAll(storage, key)).equals(bytes));
        await storage.delete(key);
        assert.equal(await storage.open(key), null, 'gone once deleted');
      });
    }

    test('a stream that fails part-way (after more than one part) rejects and leaves nothing stored', async () => {
      const before = await stored();
      await assert.rejects(storage.put(chunked(randomBytes(3 * PART_SIZE), PART_SIZE + 200_000)), /went away/);
      assert.equal(await stored(), before);
    });

    test('deleting a key with nothing under it is not an error; opening it is null', async () => {
      await storage.delete('00000000-0000-4000-8000-000000000000');
      assert.equal(await storage.open('00000000-0000-4000-8000-000000000000'), null);
    });
  });
}

contract('local disk', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-storage-'));
  const count = () => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
  return { storage: localDiskStorage(dir), stored: async () => count(), close: async () => rmSync(dir, { recursive: true, force: true }) };
});

describe('attachment storage: local disk durability', () => {
  test('a file is on disk before put resolves: its bytes and its directory entries synced (a power cut right after the 201 keeps it)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'parley-storage-sync-'));
    const dir = join(root, 'attachments');
    const original = fs.fsync;
    const synced: string[] = [];
    (fs as { fsync: typeof fs.fsync }).fsync = ((fd: number, callback: (err: NodeJS.ErrnoException | null) => void) => {
      synced.push(readlinkSync(`/proc/self/fd/${fd}`));
      original(fd, callback);
    }) as typeof fs.fsync;
    try {
      // The first upload creates attachments/ and attachments/xx/: their entries are synced up to the data directory.
      const first = await localDiskStorage(dir).put(chunked(randomBytes(200_000)));
      const sub = join(dir, first.key.slice(0, 2));
      assert.deepEqual(synced, [join(sub, first.key), sub, dir, root]);
      // A later one: the file and its directory, and attachments/ only when its xx/ directory is new.
      synced.length = 0;
      const second = await localDiskStorage(dir).put(chunked(randomBytes(10)));
      const at = join(dir, second.key.slice(0, 2));
      const isNew = second.key.slice(0, 2) !== first.key.slice(0, 2);
      assert.deepEqual(synced, isNew ? [join(at, second.key), at, dir] : [join(at, second.key), at]);
    } finally {
      (fs as { fsync: typeof fs.fsync }).fsync = original;
      rmSync(root, { recursive: true, force: true });
    }
  });
});

contract('S3 (s3rver)', async () => {
  const server = await S3TestServer.start('parley-storage-test');
  const env = server.env();
  const options = {
    bucket: env.S3_BUCKET!,
    endpoint: env.S3_ENDPOINT!,
    region: env.S3_REGION!,
    credentials: { accessKeyId: env.S3_ACCESS_KEY_ID!, secretAccessKey: env.S3_SECRET_ACCESS_KEY! },
    forcePathStyle: true,
  };
  const client = new S3Client({ region: options.region, endpoint: options.endpoint, credentials: options.credentials, forcePathStyle: true });
  const stored = async () => (await client.send(new ListObjectsV2Command({ Bucket: options.bucket }))).KeyCount ?? 0;
  return {
    storage: s3Storage(options),
    stored,
    close: async () => {
      client.destroy();
      await server.close();
    },
  };
});
