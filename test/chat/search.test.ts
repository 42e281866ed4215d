// Highlighting search words in a body (src/chat/search.ts): where each match starts and ends, and that finding
// the end of one costs folding O(n log n) characters of an n-letter word, not O(n²).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fold, highlightRanges, searchWords, shortestPrefix } from '../../src/chat/search.js';

/** The definition: the shortest start of token that folds to something beginning with word, tried length by length. */
function shortestPrefixByDefinition(token: string, word: string): number {
  for (let i = 1; i <= token.length; i++) {
    const code = token.charCodeAt(i - 1);
    if (code >= 0xd800 && code <= 0xdbff) continue;
    if (fold(token.slice(0, i)).startsWith(word)) return i;
  }
  return token.length;
}

describe('highlightRanges', () => {
  test('marks the start of each body word a search word begins, case and accents folded', () => {
    const body = 'Café CAFE cafeteria décaf';
    const marked = highlightRanges(body, searchWords('caf')).map((r) => body.slice(r.start, r.end));
    assert.deepEqual(marked, ['Caf', 'CAF', 'caf']);
  });

  test('a letter that folds to two (ß → ss) or a decomposed accent is marked whole', () => {
    const body = 'Straße e\u0301te\u0301';
    const marked = highlightRanges(body, searchWords('strass ete')).map((r) => body.slice(r.start, r.end));
    assert.deepEqual(marked, ['Straß', 'e\u0301te\u0301']);
  });

  test('the end found by halving is the end found letter by letter', () => {
    const tokens = ['Ærøskøbing', 'straßenbahn', 'e\u0301e\u0301e\u0301e\u0301', 'ÉCOLE', '😀a😀b', 'ﬁnance', 'İstanbul', 'Œuvre'];
    for (const token of tokens) {
      const folded = fold(token);
      for (let n = 1; n <= folded.length; n++) {
        const word = folded.slice(0, n);
        assert.equal(shortestPrefix(token, word), shortestPrefixByDefinition(token, word), `${token} / ${word}`);
      }
    }
  });

  test('finding the end of a match in a 1,999-letter word folds O(n log n) characters', () => {
    const token = 'é'.repeat(1999);
    let folded = 0;
    const counting = (text: string) => {
      folded += text.length;
      return fold(text);
    };
    assert.equal(shortestPrefix(token, 'e'.repeat(999), counting), 999);
    // Letter by letter this folds about 500,000 characters; halving, at most 12 starts of at most 1,999.
    assert.ok(folded <= 12 * token.length, `folded ${folded} characters`);
  });
});
