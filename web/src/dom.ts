// A very small DOM toolkit: elements from tag + attributes + children (text always as text, never as HTML),
// formatting, and native <dialog> helpers.

type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (name === 'className') element.className = String(value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, ...children);
  return element;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

export function clear(element: Element): void {
  element.replaceChildren();
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dateFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
const fullFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

const dayFormat = new Intl.DateTimeFormat(undefined, { weekday: 'long', month: 'long', day: 'numeric' });

/** A date divider's words: "Today", "Yesterday", or "Friday, 20 November". */
export function dayLabel(iso: string): string {
  const date = new Date(iso);
  const today = new Date();
  const yesterday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1);
  if (date.toDateString() === today.toDateString()) return 'Today';
  if (date.toDateString() === yesterday.toDateString()) return 'Yesterday';
  return dayFormat.format(date);
}

const URL_PATTERN = /\bhttps?:\/\/[^\s<>"]+/gi;

/**
 * Text with its http(s) links made clickable: a new tab, without the opener or a referrer. Only http: and https:
 * become links (a "javascript:" never does); trailing punctuation stays text.
 */
export function withLinks(text: string): Node[] {
  const out: Node[] = [];
  let at = 0;
  for (const match of text.matchAll(URL_PATTERN)) {
    const raw = match[0].replace(/[.,;:!?)\]}'’]+$/, '');
    let url: URL | null = null;
    try {
      url = new URL(raw);
    } catch {
      url = null;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) continue;
    if (match.index > at) out.push(document.createTextNode(text.slice(at, match.index)));
    out.push(h('a', { href: url.href, target: '_blank', rel: 'noopener noreferrer' }, raw));
    at = match.index + raw.length;
  }
  if (at < text.length) out.push(document.createTextNode(text.slice(at)));
  return out;
}

/** 14:05 today, "Nov 20" before. */
export function shortTime(iso: string): string {
  const date = new Date(iso);
  return date.toDateString() === new Date().toDateString() ? timeFormat.format(date) : dateFormat.format(date);
}

/** A direct conversation's header for someone offline: "last seen just now", "… 5 min ago", "… today at 09:30",
 * "… yesterday at 18:02", "… on Friday, 20 November". */
export function lastSeen(iso: string): string {
  const minutes = Math.floor((Date.now() - Date.parse(iso)) / 60_000);
  if (minutes < 1) return 'last seen just now';
  if (minutes < 60) return `last seen ${minutes} min ago`;
  const day = dayLabel(iso);
  return day === 'Today' || day === 'Yesterday' ? `last seen ${day.toLowerCase()} at ${timeFormat.format(new Date(iso))}` : `last seen on ${day}`;
}

export function longTime(iso: string): string {
  return fullFormat.format(new Date(iso));
}

export function fileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const letters = words.length > 1 ? [words[0], words[words.length - 1]].map((w) => [...w][0]) : [...(words[0] ?? '?')].slice(0, 2);
  return letters.join('').toUpperCase();
}

/** A stable hue per id, for avatars. */
export function hue(id: number): number {
  return (id * 137) % 360;
}

/** ' erased' for an erased user's name (DELETE /users/{id} names them "Deleted user"): shown muted, a blank avatar. */
export const erased = (name: string) => (name === 'Deleted user' ? ' erased' : '');

export function avatar(name: string, id: number, options: { online?: boolean | null; label?: boolean } = {}): HTMLElement {
  const element = h('span', { className: `avatar${erased(name)}`, 'aria-hidden': 'true' }, erased(name) ? '' : initials(name));
  element.style.setProperty('--hue', String(hue(id))); // through CSSOM: the page's CSP allows no style attributes
  if (options.online !== undefined && options.online !== null) {
    element.append(h('span', { className: options.online ? 'dot online' : 'dot' }));
  }
  return element;
}

/** Screen readers hear this (the page's polite live region). */
export function announce(text: string): void {
  const region = document.getElementById('announcer');
  if (!region) return;
  region.textContent = '';
  // A fresh text node after a tick is announced even when it repeats the previous one.
  setTimeout(() => (region.textContent = text), 50);
}

/** A short-lived error (or notice) at the top of the page. */
export function toast(text: string, kind: 'error' | 'info' = 'error'): void {
  const region = document.getElementById('toasts');
  if (!region) return;
  const close = h('button', { type: 'button', className: 'icon-button', 'aria-label': 'Dismiss' }, '×');
  const item = h('div', { className: `toast ${kind}` }, h('span', {}, text), close);
  close.addEventListener('click', () => item.remove());
  // Over the conversation's pane, below where its header is (whichever conversation is opened next): never over
  // the header's title and buttons, nor the sidebar, nor the composer at the bottom.
  const pane = document.querySelector('.thread-pane')?.getBoundingClientRect();
  region.classList.toggle('over-pane', !!pane && pane.width > 0);
  if (pane && pane.width > 0) {
    region.style.setProperty('--pane-center', `${pane.left + pane.width / 2}px`);
    region.style.setProperty('--pane-width', `${pane.width}px`);
  }
  region.append(item);
  setTimeout(() => item.remove(), kind === 'error' ? 8000 : 5000);
}

/** A modal <dialog> with a title, a body and an error line; removed from the page when closed. */
export function modal(title: string, build: (dialog: HTMLDialogElement, showError: (text: string) => void) => Node[]): HTMLDialogElement {
  const error = h('p', { className: 'form-error', role: 'alert' });
  const titleId = `dialog-title-${Math.random().toString(36).slice(2)}`;
  const dialog = h('dialog', { 'aria-labelledby': titleId });
  const showError = (text: string) => (error.textContent = text);
  const closeButton = h('button', { type: 'button', className: 'icon-button dialog-close', 'aria-label': 'Close' }, '×');
  closeButton.addEventListener('click', () => dialog.close());
  dialog.append(h('header', { className: 'dialog-header' }, h('h2', { id: titleId }, title), closeButton), ...build(dialog, showError), error);
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}

/** Asks before something that cannot be undone. */
export function confirmAction(question: string, action: string): Promise<boolean> {
  return new Promise((resolve) => {
    let answer = false;
    const dialog = modal(action, (d) => {
      const ok = h('button', { type: 'button', className: 'danger' }, action);
      const cancel = h('button', { type: 'button', className: 'secondary' }, 'Cancel');
      ok.addEventListener('click', () => {
        answer = true;
        d.close();
      });
      cancel.addEventListener('click', () => d.close());
      setTimeout(() => cancel.focus());
      return [h('p', {}, question), h('div', { className: 'dialog-actions' }, cancel, ok)];
    });
    dialog.addEventListener('close', () => resolve(answer));
  });
}

/** Ids typed by a person: "2, 3 4" → [2, 3, 4]; null when something is not a positive integer. */
export function parseIds(text: string): number[] | null {
  const parts = text.split(/[\s,;]+/).filter(Boolean);
  if (parts.some((p) => !/^[1-9]\d{0,15}$/.test(p))) return null;
  return [...new Set(parts.map(Number))];
}

const ICONS = {
  // Paperclip and forward arrow (24×24 stroke icons): no emoji font needed.
  paperclip: 'M21.44 11.05l-9.19 9.19a6 6 0 0 1-8.49-8.49l9.19-9.19a4 4 0 0 1 5.66 5.66l-9.2 9.19a2 2 0 0 1-2.83-2.83l8.49-8.48',
  forward: 'M15 17l5-5-5-5M4 18v-2a4 4 0 0 1 4-4h12',
  // A bell struck through: a muted conversation.
  muted: 'M13.73 21a2 2 0 0 1-3.46 0M18.63 13A17.89 17.89 0 0 1 18 8M6.26 6.26A5.86 5.86 0 0 0 6 8c0 7-3 9-3 9h14M18 8a6 6 0 0 0-9.33-5M1 1l22 22',
  bell: 'M18 8A6 6 0 0 0 6 8c0 7-3 9-3 9h18s-3-2-3-9M13.73 21a2 2 0 0 1-3.46 0',
  // Sliders: a conversation's settings.
  settings: 'M4 21v-7M4 10V3M12 21v-9M12 8V3M20 21v-5M20 12V3M1 14h6M9 8h6M17 16h6',
  // A pushpin: a pinned conversation.
  pin: 'M12 17v5M5 17h14l-3-5V3H8v9z',
} as const;

/** A small inline SVG icon, hidden from screen readers (the surrounding text or label names the action). */
export function icon(name: keyof typeof ICONS): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', `icon icon-${name}`);
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', ICONS[name]);
  svg.append(path);
  return svg;
}

/** A header button: an icon and a text label; at phone width only the icon shows and the label stays its accessible name. */
export function labelledIconButton(name: keyof typeof ICONS, label: string, attributes: Parameters<typeof h>[1] = {}): HTMLButtonElement {
  return h('button', { type: 'button', title: label, ...attributes }, icon(name), h('span', { className: 'button-label' }, label));
}
