// Where attachment bytes live: local disk under the data directory (the default) or an S3-compatible bucket
// (S3, MinIO, R2...). Both stream: an upload is written as it arrives, a download is read as it is sent.
import { randomUUID } from 'node:crypto';
import fs, { createWriteStream } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';

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
  /** Deletes the file; deleting a key with nothing stored under it is not an error. */
  delete(key: string): Promise<void>;
}

/**
 * fsync(2) of a file or a directory, through `fs.fsync` looked up at each call (a test watches it). A directory
 * that cannot be opened or synced (Windows) is not an error: its entries are the file system's business there.
 */
function syncPath(path: string, directory = false): Promise<void> {
  return new Promise((resolve, reject) => {
    fs.open(path, 'r', (openErr, fd) => {
      if (openErr) return directory ? resolve() : reject(openErr);
      fs.fsync(fd, (syncErr) => {
        fs.close(fd, () => (syncErr && !(directory && ['EISDIR', 'EINVAL', 'EPERM', 'EBADF'].includes(syncErr.code ?? '')) ? reject(syncErr) : resolve()));
      });
    });
  });
}

/**
 * Files under dir/<first two characters of the key>/<key>. A stored file is on disk before put resolves (so
 * before the upload's 201): its bytes are synced, and so is its directory entry (and any directory put created).
 */
export function localDiskStorage(dir: string): AttachmentStorage {
  const pathOf = (key: string): string => join(dir, key.slice(0, 2), key);
  return {
    async put(stream) {
      const key = randomUUID();
      const parent = join(dir, key.slice(0, 2));
      // The first directory mkdir made (undefined: all were there).
      const created = await mkdir(parent, { recursive: true });
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
      });
      try {
        await pipeline(stream, createWriteStream(pathOf(key)));
        await syncPath(pathOf(key));
        // Its entry in parent, and the entries of the directories mkdir created up to the one that was there.
        const directories = [parent];
        if (created !== undefined) for (let d = parent; d !== dirname(created) && d !== dirname(d); ) directories.push((d = dirname(d)));
        for (const directory of directories) await syncPath(directory, true);
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

export interface S3StorageOptions {
  readonly bucket: string;
  /** Any S3-compatible endpoint (MinIO, R2, a test server); null: AWS S3 of the region. */
  readonly endpoint: string | null;
  readonly region: string;
  /** null: the AWS SDK's own credential chain (instance roles, AWS_* variables, profiles). */
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string } | null;
  /** Bucket in the path (`endpoint/bucket/key`) instead of the host name: MinIO and most self-hosted stores. */
  readonly forcePathStyle: boolean;
}

/** Objects are written under this prefix, so the bucket may hold other things too. */
const S3_PREFIX = 'attachments/';
/**
 * Multipart parts of 5 MiB (S3's smallest) from one buffer per upload, refilled after each part is stored: an
 * upload holds one part in memory whatever the file's size, and reads no more of the request meanwhile. (The
 * SDK's lib-storage Upload joins the chunks of each part into a new buffer and keeps the rest of the last
 * chunk's buffer alive: 10–16 MiB for one upload, measured by the uploads benchmark.) A file under 5 MiB is
 * one PUT.
 */
export const PART_SIZE = 5 * 1024 * 1024;

export function s3Storage(options: S3StorageOptions, client?: S3Client): AttachmentStorage {
  const s3 = client ?? new S3Client({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    // A copy: the SDK marks the object it is given (the configuration's is frozen).
    ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
    forcePathStyle: options.forcePathStyle,
  });
  const Bucket = options.bucket;
  const objectKey = (key: string) => S3_PREFIX + key;
  const ContentType = 'application/octet-stream';
  return {
    async put(stream) {
      const key = randomUUID();
      const Key = objectKey(key);
      const part = Buffer.allocUnsafe(PART_SIZE);
      let filled = 0;
      let size = 0;
      let UploadId: string | undefined;
      const stored: { ETag: string | undefined; PartNumber: number }[] = [];
      // The SDK has sent every byte of `bytes` once send() resolves (S3 answers after the whole body), so the buffer can be refilled.
      const storePart = async (bytes: Buffer) => {
        UploadId ??= (await s3.send(new CreateMultipartUploadCommand({ Bucket, Key, ContentType }))).UploadId;
        const PartNumber = stored.length + 1;
        const out = await s3.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body: bytes, ContentLength: bytes.length }));
        stored.push({ ETag: out.ETag, PartNumber });
      };
      try {
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          size += chunk.length;
          for (let offset = 0; offset < chunk.length; ) {
            const copied = chunk.copy(part, filled, offset);
            filled += copied;
            offset += copied;
            if (filled === PART_SIZE) {
              await storePart(part);
              filled = 0;
            }
          }
        }
        if (UploadId === undefined) {
          await s3.send(new PutObjectCommand({ Bucket, Key, ContentType, Body: part.subarray(0, filled), ContentLength: filled }));
        } else {
          if (filled > 0) await storePart(part.subarray(0, filled));
          await s3.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: stored } }));
        }
      } catch (err) {
        stream.destroy();
        // Nothing is kept: neither the parts stored so far nor an object.
        if (UploadId !== undefined) await s3.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch(() => undefined);
        await s3.send(new DeleteObjectCommand({ Bucket, Key })).catch(() => undefined);
        throw err;
      }
      return { key, size };
    },
    async open(key) {
      try {
        const out = await s3.send(new GetObjectCommand({ Bucket, Key: objectKey(key) }));
        if (!out.Body) return null;
        return { stream: out.Body as Readable, size: Number(out.ContentLength ?? 0) };
      } catch (err) {
        if (err instanceof NoSuchKey || err instanceof NotFound || (err as { name?: string }).name === 'NoSuchKey') return null;
        throw err;
      }
    },
    async delete(key) {
      await s3.send(new DeleteObjectCommand({ Bucket, Key: objectKey(key) }));
    },
  };
}
