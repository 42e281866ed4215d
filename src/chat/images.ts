// Images among attachments: their dimensions and a WebP thumbnail of at most 320 px, made by sharp (libvips,
// on its own threads: the event loop only waits). A file that is not a readable image is kept as a plain file.
import { Readable } from 'node:stream';
import sharp from 'sharp';
import type { AttachmentStorage } from '../store/attachment-storage.js';

/** The largest side of a thumbnail, in pixels. */
export const THUMBNAIL_MAX_PX = 320;
/** Images over this many pixels (a 10,000 × 10,000 picture) get no thumbnail: decoding them would take too long. */
const MAX_INPUT_PIXELS = 100_000_000;

/** The stored types read as images: raster formats sharp decodes (GIF: its first frame). */
export const IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'image/avif']);

export interface ImageInfo {
  readonly width: number;
  readonly height: number;
  readonly thumbnailKey: string;
}

/**
 * Reads the stored file as an image: its dimensions (as displayed, after the EXIF orientation) and a WebP
 * thumbnail stored next to it. Null when it is not an image sharp can read (corrupt, truncated, another format
 * behind an image type): the attachment is then a plain file.
 */
export async function describeImage(storage: AttachmentStorage, key: string): Promise<ImageInfo | null> {
  const file = await storage.open(key);
  if (!file) return null;
  try {
    // The decoder needs the whole file (at most CHAT_ATTACHMENT_MAX_BYTES); it is held only while the image is read.
    const chunks: Buffer[] = [];
    for await (const chunk of file.stream) chunks.push(chunk as Buffer);
    const image = sharp(Buffer.concat(chunks), { failOn: 'error', limitInputPixels: MAX_INPUT_PIXELS });
    const [meta, thumbnail] = await Promise.all([
      image.metadata(),
      image
        .clone()
        .rotate() // EXIF orientation applied
        .resize(THUMBNAIL_MAX_PX, THUMBNAIL_MAX_PX, { fit: 'inside', withoutEnlargement: true })
        .webp({ quality: 75 })
        .toBuffer(),
    ]);
    const oriented = (meta.orientation ?? 1) >= 5; // 5-8: turned by 90°
    const width = oriented ? meta.height : meta.width;
    const height = oriented ? meta.width : meta.height;
    if (!width || !height) return null;
    const { key: thumbnailKey } = await storage.put(Readable.from([thumbnail]));
    return { width, height, thumbnailKey };
  } catch {
    file.stream.destroy();
    return null;
  }
}
