// Search: messages of the caller's conversations by their words, and users by their names' words.
//
// A search's words are matched as word prefixes, case- and accent-insensitively, all of them required:
// "caf" finds "Café", "Café" finds "cafe". The database folds and tokenizes (migration 004); this module
// checks the input, pages, and marks where each result's body matches (the same folding, in JavaScript).
import { loadHistoryItems } from '../store/read-model.js';
import { searchMessageIds, searchUsers as findUsers, type UserPosition } from '../store/search.js';
import { requireParticipant } from './access.js';
import { lagTolerant, type Actor, type ChatContext } from './context.js';
import type { Page } from './conversations.js';
import { invalid } from '../contract/api-errors.js';
import type { SearchHit, UserResource } from '../contract/resources.js';

/** The longest message search, in characters: a longer q is refused (422). */
export const SEARCH_QUERY_MAX_CHARS = 999;
/** The longest user search, in characters (names have at most 200). */
export const USER_QUERY_MAX_CHARS = 200;
/** The most words one search may have. */
export const SEARCH_MAX_WORDS = 32;

// ----------------------------------------------------------------------------------------------------------
// Folding, as parley_fold (migration 004) does it: the Latin letters NFKD does not split, mapped by hand;
// NFKD; the combining marks U+0300–U+036F dropped; NFC; lower case.

const LETTERS: Record<string, string> = {
  Ø: 'O', ø: 'o', Ł: 'L', ł: 'l', Đ: 'D', đ: 'd', Ħ: 'H', ħ: 'h', ı: 'i', Ŧ: 'T', ŧ: 't', Ŀ: 'L', ŀ: 'l',
  ß: 'ss', Æ: 'AE', æ: 'ae', Œ: 'OE', œ: 'oe', Þ: 'TH', þ: 'th',
};
const LETTER_PATTERN = new RegExp(`[${Object.keys(LETTERS).join('')}]`, 'g');

/** Lower case without accents: "Ærøskøbing Café" → "aeroskobing cafe". */
export function fold(text: string): string {
  return text
    .replace(LETTER_PATTERN, (c) => LETTERS[c]!)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .normalize('NFC')
    .toLowerCase();
}

/** A word as the highlighting sees it: a run of letters, digits and marks. */
export const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/** The folded words of a search (runs of letters and digits), for highlighting. */
export function searchWords(q: string): string[] {
  return [...new Set(fold(q).match(WORD) ?? [])];
}

/**
 * Where the words of a search are in a body: for each word of the body that one of them begins (once folded),
 * the shortest start of that word that folds to the search word, with any marks that follow. Ranges in
 * UTF-16 code units, ascending, not overlapping.
 */
export function highlightRanges(body: string | null, words: readonly string[]): { start: number; end: number }[] {
  if (body === null || words.length === 0) return [];
  const ranges: { start: number; end: number }[] = [];
  for (const match of body.matchAll(WORD)) {
    const token = match[0];
    const folded = fold(token);
    // The longest search word this body word starts with.
    let best: string | null = null;
    for (const w of words) if (folded.startsWith(w) && (best === null || w.length > best.length)) best = w;
    if (best === null) continue;
    let stop = shortestPrefix(token, best);
    while (stop < token.length && /\p{M}/u.test(token[stop]!)) stop++;
    ranges.push({ start: match.index, end: match.index + stop });
  }
  return ranges;
}

/**
 * The length of token's shortest start whose folding begins with word (token's folding does). A binary search:
 * folding a longer start never loses what a shorter one gave, and trying every length would fold O(n²)
 * characters (five words of 2,000 "é" took seconds). Never ends inside a surrogate pair.
 */
export function shortestPrefix(token: string, word: string, foldText: (text: string) => string = fold): number {
  let low = 1;
  let high = token.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (foldText(token.slice(0, mid)).startsWith(word)) high = mid;
    else low = mid + 1;
  }
  const code = token.charCodeAt(low - 1);
  return code >= 0xd800 && code <= 0xdbff ? low + 1 : low;
}

// ----------------------------------------------------------------------------------------------------------

/** A search as given: trimmed; refused (422 on `field`) when empty, too long, with a NUL, or without a letter or digit. */
function checkQuery(field: string, q: string | undefined, maxChars: number): string {
  const text = (q ?? '').trim();
  if (text === '') throw invalid(field, `Give ${field}: the words to search for.`);
  if ([...text].length > maxChars) throw invalid(field, `${field} may have at most ${maxChars} characters.`);
  if (text.includes('\u0000')) throw invalid(field, 'Text may not contain the NUL character.');
  const words = fold(text).match(WORD) ?? [];
  if (words.length === 0) throw invalid(field, `${field} has no words to search for (letters or digits).`);
  if (words.length > SEARCH_MAX_WORDS) throw invalid(field, `${field} may have at most ${SEARCH_MAX_WORDS} words.`);
  return text;
}

const badCursor = () => invalid('cursor', 'The cursor is not one this API returned.');

/** Message search cursor: the last message's id (messages are listed newest first, by id). */
const encodeMessageCursor = (id: number): string => Buffer.from(`m${id}`).toString('base64url');
function decodeMessageCursor(cursor: string): number {
  const match = /^m(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString());
  const id = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(id) || id < 1) throw badCursor();
  return id;
}

/** User search cursor: the last user's rank, folded name and id (users are listed in that order). */
const encodeUserCursor = (u: UserPosition): string => Buffer.from(JSON.stringify([u.rank, u.name, u.id])).toString('base64url');
function decodeUserCursor(cursor: string): UserPosition {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(value) || value.length !== 3) throw badCursor();
  const [rank, name, id] = value as unknown[];
  if ((rank !== 0 && rank !== 1) || typeof name !== 'string' || name.includes('\u0000') || !Number.isSafeInteger(id)) throw badCursor();
  return { rank, name, id: id as number };
}

export interface MessageSearch {
  readonly q?: string;
  readonly conversation_id?: number;
  readonly cursor?: string;
  readonly limit: number;
}

/**
 * Messages of the conversations the actor is in now (or of one of them: 404 when the actor is not in it),
 * not deleted, matching every word of q as a word prefix: newest first, each as history lists it plus where
 * its body matches. Three queries, four with conversation_id (its membership first).
 */
export async function searchMessages(ctx: ChatContext, actor: Actor, search: MessageSearch): Promise<Page<SearchHit>> {
  const q = checkQuery('q', search.q, SEARCH_QUERY_MAX_CHARS);
  const beforeId = search.cursor === undefined ? undefined : decodeMessageCursor(search.cursor);
  const { ids, items } = await lagTolerant(ctx, actor.userId, async (db) => {
    if (search.conversation_id !== undefined) await requireParticipant(db, search.conversation_id, actor.userId);
    const ids = await searchMessageIds(db, actor.userId, q, { conversationId: search.conversation_id, beforeId, limit: search.limit + 1 });
    // The same items as GET /conversations/{id}/messages (listMessages), so a result and history agree.
    return { ids, items: await loadHistoryItems(db, ids.slice(0, search.limit)) };
  });
  const page = ids.slice(0, search.limit);
  const words = searchWords(q);
  const data = page.flatMap((id) => {
    const item = items.get(id);
    return item ? [{ ...item, highlight: highlightRanges(item.body, words) }] : [];
  });
  return { data, next_cursor: ids.length > search.limit ? encodeMessageCursor(page.at(-1)!) : null };
}

export interface UserSearch {
  readonly query?: string;
  readonly cursor?: string;
  readonly limit: number;
}

/**
 * Users with a word of their name starting with each word of query (case and accents folded): "ali" finds
 * "Alice Martin", "Ali Khan" and "Nora Alič", "mart al" finds "Alice Martin". Names that begin with a word
 * of the query first, then the others; each by name (folded, byte order), then id.
 */
export async function searchUsers(ctx: ChatContext, actor: Actor, search: UserSearch): Promise<Page<UserResource>> {
  const query = checkQuery('query', search.query, USER_QUERY_MAX_CHARS);
  const after = search.cursor === undefined ? undefined : decodeUserCursor(search.cursor);
  const rows = await lagTolerant(ctx, actor.userId, (db) => findUsers(db, query, { after, limit: search.limit + 1 }));
  const page = rows.slice(0, search.limit);
  const last = page.at(-1);
  return {
    data: page.map((u) => ({ id: u.id, name: u.name, avatar_url: u.avatar_url })),
    next_cursor: rows.length > search.limit && last ? encodeUserCursor({ rank: last.rank, name: last.search_name, id: last.id }) : null,
  };
}
