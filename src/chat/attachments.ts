// Attachments: uploaded first, then sent with a message; readable by the uploader and by the participants of a
// conversation where a message carries them.
import type { Readable } from 'node:stream';
import type { AttachmentStorage } from '../store/attachment-storage.js';
import { attachmentSharedWith, findAttachment, insertAttachment } from '../store/attachments.js';
import type { Attachment } from '../store/schema.js';
import type { Actor, ChatContext } from './context.js';
import { ChatError, notFound } from './errors.js';
import type { AttachmentResource } from './resources.js';
import { attachmentResource } from '../store/read-model.js';

export interface Upload {
  readonly filename: string;
  readonly mimetype: string;
  readonly file: Readable & { truncated?: boolean };
}

export async function uploadAttachment(ctx: ChatContext, storage: AttachmentStorage, actor: Actor, upload: Upload): Promise<AttachmentResource> {
  const { key, size } = await storage.put(upload.file);
  if (upload.file.truncated) {
    await storage.delete(key);
    throw new ChatError('payload_too_large', `An attachment may be at most ${ctx.limits.attachmentMaxBytes} bytes.`);
  }
  const row = await insertAttachment(
    ctx.db,
    {
      uploader_id: actor.userId,
      // PostgreSQL text cannot hold U+0000, which a multipart part's headers may carry.
      name: upload.filename.replaceAll('\u0000', '').slice(0, 255) || 'file',
      mime_type: upload.mimetype.replaceAll('\u0000', '') || 'application/octet-stream',
      size,
      storage_key: key,
    },
    new Date(),
  );
  return attachmentResource(row);
}

/** The attachment, if the actor may read it; 404 otherwise so ids are not probed. */
export async function readableAttachment(ctx: ChatContext, actor: Actor, id: number): Promise<Attachment> {
  const attachment = await findAttachment(ctx.db, id);
  if (!attachment) throw notFound('Attachment');
  if (attachment.uploader_id === actor.userId) return attachment;
  if (!(await attachmentSharedWith(ctx.db, id, actor.userId))) throw notFound('Attachment');
  return attachment;
}
