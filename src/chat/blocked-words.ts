// Blocked words (CHAT_BLOCKED_WORDS, v1.2): a message or edit containing one as a whole word, folded as search
// folds (case and accents: search.ts), is refused 422 blocked_word. The text is folded once and cut into words;
// each word is one Set lookup (a phrase of several words: a Map from its first word), so a list of 10,000 words
// costs a send a few microseconds.
import { ChatError } from '../contract/api-errors.js';
import { WORD, fold } from './search.js';

const wordsOf = (text: string): string[] => fold(text).match(WORD) ?? [];

export interface BlockedWords {
  /** How many words and phrases are blocked. */
  readonly size: number;
  /** Throws 422 blocked_word when text holds a blocked word or phrase. */
  check(text: string | null): void;
}

/** The check of these words and phrases (CHAT_BLOCKED_WORDS's entries, config/blocked-words.ts). */
export function blockedWords(entries: readonly string[]): BlockedWords {
  const single = new Set<string>();
  const phrases = new Map<string, string[][]>();
  for (const entry of entries) {
    const words = wordsOf(entry);
    if (words.length === 1) single.add(words[0]!);
    else if (words.length > 1) phrases.set(words[0]!, [...(phrases.get(words[0]!) ?? []), words]);
  }
  const size = single.size + [...phrases.values()].reduce((n, list) => n + list.length, 0);
  const holds = (text: string): boolean => {
    const words = wordsOf(text);
    for (let i = 0; i < words.length; i++) {
      const word = words[i]!;
      if (single.has(word)) return true;
      const candidates = phrases.get(word);
      if (candidates?.some((phrase) => phrase.every((w, k) => words[i + k] === w))) return true;
    }
    return false;
  };
  return {
    size,
    check(text) {
      if (size === 0 || text === null) return;
      if (holds(text)) throw new ChatError('blocked_word', 'The message contains a word that is not allowed here.', { errors: { body: ['The message contains a word that is not allowed here.'] } });
    },
  };
}
