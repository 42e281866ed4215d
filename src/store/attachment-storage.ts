// Where attachment bytes live. Local disk under the data directory; the interface leaves room for object storage.
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** A stored file, opened for reading: its bytes and how many there are. */
export interface StoredFile {
  readonly stream: Readable;
  readonly size: number;
}

export interface AttachmentStorage {
  /** Stores the stream; returns its key and size. Rejects (and keeps nothing) if the stream errors. */
  put(stream: Readable): Promise<{ key: string; size: number }>;
  /**
   * Opens the stored file: null when nothing is stored under the key (a file lost or deleted behind Parley's
   * back). Resolves only once the file is open, so a missing file is known before any response is started.
   */
  open(key: string): Promise<StoredFile | null>;
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
    async open(key) {
      let handle;
      try {
        handle = await open(pathOf(key), 'r');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
      try {
        const { size } = await handle.stat();
        // The stream closes the file when it ends or is destroyed (Fastify destroys it when the client goes away).
        return { stream: handle.createReadStream(), size };
      } catch (err) {
        await handle.close();
        throw err;
      }
    },
    delete: (key) => rm(pathOf(key), { force: true }),
  };
}
