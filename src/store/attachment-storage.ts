// Where attachment bytes live. Local disk under the data directory; the interface leaves room for object storage.
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface AttachmentStorage {
  /** Stores the stream; returns its key and size. Rejects (and keeps nothing) if the stream errors. */
  put(stream: Readable): Promise<{ key: string; size: number }>;
  get(key: string): Readable;
  delete(key: string): Promise<void>;
}

export function localDiskStorage(dir: string): AttachmentStorage {
  const pathOf = (key: string): string => join(dir, key.slice(0, 2), key);
  return {
    async put(stream) {
      const key = randomUUID();
      await mkdir(join(dir, key.slice(0, 2)), { recursive: true });
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
      });
      try {
        await pipeline(stream, createWriteStream(pathOf(key)));
      } catch (err) {
        await rm(pathOf(key), { force: true });
        throw err;
      }
      return { key, size };
    },
    get: (key) => createReadStream(pathOf(key)),
    delete: (key) => rm(pathOf(key), { force: true }),
  };
}
