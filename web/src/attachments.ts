// Attachments in the timeline and in the composer. Files need the bearer token, so they are fetched once and
// shown through object URLs (revoked when the thread closes). An image shows its server-made thumbnail in a
// box of its final size, reserved from the attachment's width and height before any byte arrives (no layout
// shift); a click opens the original in a dialog. Other files are a chip that downloads on click.
import { describeError, type Api } from './api.js';
import { fileSize, h, icon, modal, toast } from './dom.js';
import type { Attachment } from './types.js';

/** The largest box an image takes in the timeline, in CSS pixels (the stylesheet's max-width caps it further on narrow screens). */
export const IMAGE_BOX = { width: 288, height: 256 } as const;

/** The displayed size of a width × height image that fits the box, never enlarged. */
export function fitInBox(width: number, height: number, box: { width: number; height: number } = IMAGE_BOX): { width: number; height: number } {
  const scale = Math.min(1, box.width / width, box.height / height);
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

export class AttachmentFiles {
  private readonly urls = new Map<string, Promise<string>>();

  constructor(private readonly api: Api) {}

  /** An object URL for a server URL (the file or its thumbnail), fetched once. */
  objectUrl(url: string): Promise<string> {
    let objectUrl = this.urls.get(url);
    if (!objectUrl) {
      objectUrl = this.api.blob(url).then((blob) => URL.createObjectURL(blob));
      objectUrl.catch(() => this.urls.delete(url));
      this.urls.set(url, objectUrl);
    }
    return objectUrl;
  }

  /** Frees every object URL (the thread closed). */
  revokeAll(): void {
    for (const url of this.urls.values()) void url.then((u) => URL.revokeObjectURL(u), () => {});
    this.urls.clear();
  }

  /** An attachment in a message bubble. `loaded` runs when an image or thumbnail has loaded (to keep the list scrolled). */
  render(attachment: Attachment, loaded: () => void = () => {}): HTMLElement {
    const box = h('div', { className: 'attachment' });
    const label = `${attachment.name} (${fileSize(attachment.size)})`;
    const kind = attachment.mime_type.split('/')[0];
    const showError = (err: unknown) => box.append(h('span', { className: 'form-error' }, describeError(err)));
    if (kind === 'image') {
      const image = h('img', { alt: attachment.name, className: 'attachment-image', decoding: 'async' });
      if (attachment.width && attachment.height) {
        // Width and height attributes give the box its aspect ratio before the image loads.
        const size = fitInBox(attachment.width, attachment.height);
        image.width = size.width;
        image.height = size.height;
        image.classList.add('sized');
      }
      image.addEventListener('load', loaded);
      const open = h('button', { type: 'button', className: 'attachment-open', 'aria-label': `Open ${attachment.name}` }, image);
      open.addEventListener('click', () => this.openOriginal(attachment));
      box.append(open, h('span', { className: 'attachment-name' }, label));
      this.objectUrl(attachment.thumbnail_url ?? attachment.url).then((url) => (image.src = url), showError);
    } else if (kind === 'video' || kind === 'audio') {
      const media = h(kind, { controls: true, className: 'attachment-media', 'aria-label': attachment.name });
      box.append(media, h('span', { className: 'attachment-name' }, label));
      this.objectUrl(attachment.url).then((url) => (media.src = url), showError);
    } else {
      const download = h('button', { type: 'button', className: 'file-button' }, icon('paperclip'), label);
      download.addEventListener('click', async () => {
        try {
          h('a', { href: await this.objectUrl(attachment.url), download: attachment.name }).click();
        } catch (err) {
          toast(describeError(err));
        }
      });
      box.append(download);
    }
    return box;
  }

  /** The original image, full size in a dialog (Esc or Close closes it), with a link to save it. */
  private openOriginal(attachment: Attachment): void {
    const image = h('img', { alt: attachment.name, className: 'original-image', decoding: 'async' });
    const save = h('a', { className: 'button secondary', download: attachment.name }, 'Download');
    modal(attachment.name, (_dialog, showError) => {
      this.objectUrl(attachment.url).then(
        (url) => {
          image.src = url;
          save.href = url;
        },
        (err: unknown) => showError(describeError(err)),
      );
      return [h('div', { className: 'original-frame' }, image), h('div', { className: 'dialog-actions' }, save)];
    }).classList.add('image-dialog');
  }
}

/**
 * What the composer shows for a picked file before it is sent: a small preview of an image (read from the
 * local file, nothing uploaded yet) or a chip with the name and size. Returns the element and a cleanup.
 */
export function filePreview(file: File): { element: HTMLElement; dispose: () => void } {
  const chip = h('span', { className: 'file-chip' }, icon('paperclip'), `${file.name} (${fileSize(file.size)})`);
  if (!/^image\/(png|jpeg|webp|gif|avif)$/.test(file.type)) return { element: chip, dispose: () => {} };
  const url = URL.createObjectURL(file);
  const preview = h('img', { className: 'composer-preview', alt: `Preview of ${file.name}`, src: url });
  return { element: h('span', { className: 'file-preview' }, preview, chip), dispose: () => URL.revokeObjectURL(url) };
}
