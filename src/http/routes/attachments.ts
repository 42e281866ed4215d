import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { downloadHeaders, MissingFileError, openAttachment, openThumbnail, StorageUnavailableError, uploadAttachment } from '../../chat/attachments.js';
import { ChatError } from '../../contract/api-errors.js';
import { AttachmentResource } from '../../contract/resources.js';
import type { HttpDeps } from '../deps.js';
import { Data, ErrorBody, IdParams, userErrors } from '../schemas.js';

const tags = ['attachments'];

/**
 * The multipart parser's own errors (no boundary, data ending early) carry neither a status nor a code: they
 * are the client's malformed upload, a 400. Everything else (limits, storage, database) passes through.
 */
function malformedUpload(err: unknown): never {
  const { statusCode, code } = err as { statusCode?: unknown; code?: unknown };
  if (err instanceof ChatError || statusCode !== undefined || code !== undefined) throw err;
  throw new ChatError('bad_request', 'The upload is not valid multipart/form-data.');
}

/** The error answers of a download (JSON, as every error; the file itself has no JSON schema): for the OpenAPI document. */
const fileErrors = { 401: ErrorBody, 404: ErrorBody, 429: ErrorBody, 503: ErrorBody };
/** A download's 200 for the OpenAPI document: bytes of the given type (streamed, never serialized as JSON). */
const bytes = (type: string, description: string) => ({ description, content: { [type]: { schema: { type: 'string', format: 'binary' } } } });

export const attachmentRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat, storage }) => {
  app.post('/attachments', {
    schema: {
      tags, summary: 'Upload one file (multipart/form-data); send it with a message by its id',
      consumes: ['multipart/form-data'],
      response: { 201: Data(AttachmentResource), 413: userErrors[422], ...userErrors },
    },
  }, async (request, reply) => {
    if (!request.isMultipart()) throw new ChatError('unsupported_media_type', 'Upload the file as multipart/form-data.');
    const file = await request.file().catch(malformedUpload);
    if (!file) throw new ChatError('validation_failed', 'No file in the upload.', { errors: { file: ['A file is required.'] } });
    const attachment = await uploadAttachment(chat, storage, request.actor, { filename: file.filename, mimetype: file.mimetype, file: file.file })
      .catch((err: unknown) => {
        if (err instanceof StorageUnavailableError) request.log.error({ err: err.cause }, 'attachment store failed on upload');
        return malformedUpload(err);
      });
    return reply.status(201).send({ data: attachment });
  });

  app.get('/attachments/:id', {
    schema: { tags, summary: 'The file (uploader, and participants of a conversation where it was sent)', params: IdParams, response: { 200: bytes('application/octet-stream', 'The file, with its stored Content-Type'), ...fileErrors } },
  }, async (request, reply) => {
    const { attachment, file } = await openAttachment(chat, storage, request.actor, request.params.id).catch((err: unknown) => {
      if (err instanceof MissingFileError) {
        request.log.error({ attachment_id: err.attachment.id, storage_key: err.attachment.storage_key }, 'attachment file missing from storage');
      }
      if (err instanceof StorageUnavailableError) request.log.error({ err: err.cause }, 'attachment store failed on download');
      throw err;
    });
    // Headers only once the file is open: a failure before this point answers the usual JSON error body.
    return reply
      .headers({ ...downloadHeaders(attachment) })
      .header('Content-Length', String(file.size))
      .header('Cache-Control', 'private, max-age=3600')
      .send(file.stream);
  });

  app.get('/attachments/:id/thumbnail', {
    schema: { tags, summary: "An image's WebP thumbnail, at most 320 px (same access rule as the file)", params: IdParams, response: { 200: bytes('image/webp', 'The WebP thumbnail'), ...fileErrors } },
  }, async (request, reply) => {
    const file = await openThumbnail(chat, storage, request.actor, request.params.id).catch((err: unknown) => {
      if (err instanceof StorageUnavailableError) request.log.error({ err: err.cause }, 'attachment store failed on download');
      throw err;
    });
    return reply
      .headers({ ...downloadHeaders({ name: 'thumbnail.webp', mime_type: 'image/webp' }) })
      .header('Content-Length', String(file.size))
      .header('Cache-Control', 'private, max-age=3600')
      .send(file.stream);
  });
};
