// Attachments: uploaded first, then sent with a message; readable by the uploader and by the participants of a
// conversation where a message carries them.
import type { Readable } from 'node:stream';
import type { AttachmentStorage, StoredFile } from '../store/attachment-storage.js';
import { attachmentBytesOf, attachmentSharedWith, findAttachment, insertAttachment } from '../store/attachments.js';
import { lockUsers } from '../store/locks.js';
import { inTransaction } from '../store/transaction.js';
import type { Attachment } from '../store/schema.js';
import type { Actor, ChatContext } from './context.js';
import { ChatError, notFound } from '../contract/api-errors.js';
import type { AttachmentResource } from '../contract/resources.js';
import { attachmentResource } from '../store/read-model.js';
import { wellFormed } from './text.js';
import { describeImage, IMAGE_TYPES, type ImageInfo } from './images.js';

const OCTET_STREAM = 'application/octet-stream';
/** RFC 9110 `token`: the syntax of a media type's type and subtype. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/**
 * The media type stored for an upload's part Content-Type (and served for a stored one): its `type/subtype`
 * in lower case, parameters dropped. Anything that is not `token/token` (a control character, a missing
 * subtype, spaces inside, over 255 characters) becomes application/octet-stream: the file is kept, but never
 * served under a type the client made up.
 */
export function storedMediaType(raw: string): string {
  const essence = raw.split(';', 1)[0]!.trim().toLowerCase();
  if (essence.length > 255) return OCTET_STREAM;
  const parts = essence.split('/');
  return parts.length === 2 && TOKEN.test(parts[0]!) && TOKEN.test(parts[1]!) ? essence : OCTET_STREAM;
}

/**
 * Types a browser may render in place without running anything from the file: raster images, common audio and
 * video, plain text and PDF. Everything else (HTML, SVG, XML, JavaScript, unknown types) is active or unknown
 * content: always a download.
 */
const INLINE_TYPES: ReadonlySet<string> = new Set([
  'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/bmp',
  'audio/mpeg', 'audio/mp4', 'audio/aac', 'audio/ogg', 'audio/opus', 'audio/wav', 'audio/webm', 'audio/flac',
  'video/mp4', 'video/webm', 'video/ogg', 'video/quicktime',
  'text/plain',
  'application/pdf',
]);

export interface DownloadHeaders {
  readonly 'Content-Type': string;
  readonly 'Content-Disposition': string;
  readonly 'X-Content-Type-Options': 'nosniff';
  readonly 'Content-Security-Policy'?: string;
}

/**
 * How an attachment is served. Inline only for INLINE_TYPES; everything else as `attachment`. Every download
 * carries `nosniff`, and every one but PDF (whose viewer a sandbox would block) `Content-Security-Policy:
 * sandbox`, so even a file opened in a tab runs no script with this origin's rights.
 */
export function downloadHeaders(attachment: Pick<Attachment, 'name' | 'mime_type'>): DownloadHeaders {
  const type = storedMediaType(attachment.mime_type); // rows stored before types were checked are checked here
  const disposition = INLINE_TYPES.has(type) ? 'inline' : 'attachment';
  return {
    'Content-Type': type,
    'Content-Disposition': `${disposition}; filename*=UTF-8''${encodeURIComponent(attachment.name)}`,
    'X-Content-Type-Options': 'nosniff',
    ...(type === 'application/pdf' ? {} : { 'Content-Security-Policy': 'sandbox' }),
  };
}

export interface Upload {
  readonly filename: string;
  readonly mimetype: string;
  readonly file: Readable & { truncated?: boolean };
}

export async function uploadAttachment(ctx: ChatContext, storage: AttachmentStorage, actor: Actor, upload: Upload): Promise<AttachmentResource> {
  const quota = ctx.limits.uploadQuotaBytes;
  // A first look without a lock: a user already at the quota is refused before any byte is stored.
  if ((await attachmentBytesOf(ctx.db, actor.userId)) >= quota) throw quotaExceeded(quota);
  const { key, size } = await storage.put(upload.file).catch((err: unknown) => {
    // The upload's own stream failing (malformed multipart, the client gone) is the client's; anything else is
    // the store's, which the client cannot fix: 503, logged with its cause.
    if (upload.file.errored) throw err;
    throw new StorageUnavailableError(err);
  });
  const mimeType = storedMediaType(upload.mimetype);
  let image: ImageInfo | null = null;
  try {
    if (upload.file.truncated) {
      throw new ChatError('payload_too_large', `An attachment may be at most ${ctx.limits.attachmentMaxBytes} bytes.`);
    }
    // Images: dimensions and a thumbnail, read from the stored file (null: not an image, or not a readable one).
    if (IMAGE_TYPES.has(mimeType)) image = await describeImage(storage, key);
    // The decision: under the uploader's row lock (store/locks.ts: users come first), so concurrent uploads of one
    // user are counted one after the other and together never pass the quota.
    const row = await inTransaction(ctx.db, async (trx) => {
      await lockUsers(trx, [actor.userId]);
      if ((await attachmentBytesOf(trx, actor.userId)) + size > quota) throw quotaExceeded(quota);
      return insertAttachment(
        trx,
        {
          uploader_id: actor.userId,
          // PostgreSQL text cannot hold U+0000, which a multipart part's headers may carry; at most 255 code points
          // (cut between characters, never inside a surrogate pair).
          name: [...wellFormed(upload.filename.replaceAll('\u0000', ''))].slice(0, 255).join('') || 'file',
          mime_type: mimeType,
          size,
          storage_key: key,
          width: image?.width ?? null,
          height: image?.height ?? null,
          thumbnail_key: image?.thumbnailKey ?? null,
        },
        new Date(),
      );
    });
    return attachmentResource(row);
  } catch (err) {
    await storage.delete(key).catch(() => undefined);
    if (image) await storage.delete(image.thumbnailKey).catch(() => undefined);
    throw err;
  }
}

function quotaExceeded(quota: number): ChatError {
  return new ChatError('quota_exceeded', `Your attachments may take at most ${quota} bytes together.`);
}

/** The attachment, if the actor may read it; 404 otherwise so ids are not probed. */
export async function readableAttachment(ctx: ChatContext, actor: Actor, id: number): Promise<Attachment> {
  const attachment = await findAttachment(ctx.db, id);
  if (!attachment) throw notFound('Attachment');
  if (attachment.uploader_id === actor.userId) return attachment;
  if (!(await attachmentSharedWith(ctx.db, id, actor.userId))) throw notFound('Attachment');
  return attachment;
}

/** The attachment's bytes, if the actor may read it; 404 also when its file is gone from storage. */
export async function openAttachment(
  ctx: ChatContext,
  storage: AttachmentStorage,
  actor: Actor,
  id: number,
): Promise<{ attachment: Attachment; file: StoredFile }> {
  const attachment = await readableAttachment(ctx, actor, id);
  const file = await storage.open(attachment.storage_key).catch((err: unknown) => {
    throw new StorageUnavailableError(err);
  });
  if (!file) throw new MissingFileError(attachment);
  return { attachment, file };
}

/** The image's WebP thumbnail, under the same access rule as the file; 404 for a file without one. */
export async function openThumbnail(ctx: ChatContext, storage: AttachmentStorage, actor: Actor, id: number): Promise<StoredFile> {
  const attachment = await readableAttachment(ctx, actor, id);
  if (attachment.thumbnail_key === null) throw notFound('Thumbnail');
  const file = await storage.open(attachment.thumbnail_key).catch((err: unknown) => {
    throw new StorageUnavailableError(err);
  });
  if (!file) throw new MissingFileError(attachment);
  return file;
}

/** The row is there, its file is not (lost or deleted from storage): a 404 for the client, an error for the logs. */
export class MissingFileError extends ChatError {
  constructor(readonly attachment: Attachment) {
    super('not_found', "The attachment's file is no longer stored.");
  }
}

/** The attachment store failed (S3 unreachable, refused credentials, disk full): 503, its cause for the logs. */
export class StorageUnavailableError extends ChatError {
  constructor(override readonly cause: unknown) {
    super('service_unavailable', 'The attachment store is not available; try again later.');
  }
}
