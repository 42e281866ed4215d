// Images among attachments: their dimensions and a WebP thumbnail of at most 320 px, made by sharp (libvips,
// on its own threads: the event loop only waits). A file that is not a readable image is kept as a plain file.
// The declared type is only a hint: sharp reads whatever format the bytes are (SVG, PDF, TIFF, ...), so a file
// is handed to it only when its own first bytes say it is one of the raster formats below (rasterFormat), and
// kept only when sharp read it as that very format. An SVG sent as image/png is never rendered.
import { Readable } from 'node:stream';
import sharp from 'sharp';
import type { AttachmentStorage } from '../store/attachment-storage.js';

/** The largest side of a thumbnail, in pixels. */
export const THUMBNAIL_MAX_PX = 320;
/** Images over this many pixels (a 10,000 × 10,000 picture) get no thumbnail: decoding them would take too long. */
const MAX_INPUT_PIXELS = 100_000_000;

/** The stored types read as images: raster formats sharp decodes (GIF: its first frame). */
export const IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'image/avif']);

/** The formats thumbnails are made of, as sharp names them (AVIF is `heif` to it). */
type RasterFormat = 'png' | 'jpeg' | 'webp' | 'gif' | 'heif';

/** The raster format the file's first bytes announce (its signature), or null for anything else. */
export function rasterFormat(bytes: Buffer): RasterFormat | null {
  const ascii = (from: number, to: number) => bytes.subarray(from, to).toString('latin1');
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a') return 'gif';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  if (ascii(4, 8) === 'ftyp') {
    // ISO-BMFF: the major brand, then compatible brands, up to the end of the ftyp box.
    const boxEnd = Math.min(bytes.length, bytes.readUInt32BE(0));
    for (let at = 8; at + 4 <= boxEnd; at += 4) {
      if (at === 12) continue; // the minor version, not a brand
      const brand = ascii(at, at + 4);
      if (brand === 'avif' || brand === 'avis') return 'heif';
    }
  }
  return null;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

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
    const bytes = Buffer.concat(chunks);
    const format = rasterFormat(bytes);
    if (format === null) return null; // not a raster image, whatever its declared type: never given to sharp
    const image = sharp(bytes, { failOn: 'error', limitInputPixels: MAX_INPUT_PIXELS });
    const [meta, thumbnail] = await Promise.all([
      image.metadata(),
      image
        .clone()
        .rotate() // EXIF orientation applied
        .resize(THUMBNAIL_MAX_PX, THUMBNAIL_MAX_PX, { fit: 'inside', withoutEnlargement: true })
        .webp({ quality: 75 })
        .toBuffer(),
    ]);
    if (meta.format !== format) return null;
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
