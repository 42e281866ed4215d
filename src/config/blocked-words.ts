// CHAT_BLOCKED_WORDS: comma-separated words or phrases, or `@/path` naming a file of them (one a line, or
// comma-separated), read once at start; a file that cannot be read stops the start with one line saying so.
// What the entries block is chat/blocked-words.ts's.
import { readFileSync } from 'node:fs';
import { ConfigError } from './settings.js';

export function loadBlockedWords(setting: string | null): string[] {
  if (setting === null) return [];
  let text = setting;
  if (setting.startsWith('@')) {
    const path = setting.slice(1);
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new ConfigError(`CHAT_BLOCKED_WORDS names a file that cannot be read: ${path} (${why}). Fix: point @ at a readable file of words, one a line, or give the words themselves, comma-separated.`);
    }
  }
  return text.split(/[,\n\r]+/).map((entry) => entry.trim()).filter((entry) => entry !== '');
}
