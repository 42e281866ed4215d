// The client's ledger of changes a handler has seen (packages/client/src/ledger.ts): a change arrives live, from
// GET /sync, or both, in either order; each is delivered once. A live event has no position in the feed, so a
// change is known by its type and payload; the feed may return the payload's keys in another order.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChangeLedger, canonicalJson } from '../../packages/client/src/ledger.js';

const sent = (id: number, body = `m${id}`) => ({ id, conversation_id: 7, body, sender: { id: 1, name: 'Alice' } });

describe('@parley/client: the ledger of changes seen', () => {
  test('a change that came live is not delivered again by a sync, whatever the order of its keys', () => {
    const ledger = new ChangeLedger();
    assert.equal(ledger.acceptLive('MessageSent', sent(1)), true);
    const reordered = { sender: { name: 'Alice', id: 1 }, body: 'm1', conversation_id: 7, id: 1 };
    assert.equal(ledger.acceptSynced('MessageSent', reordered), false);
    assert.equal(ledger.acceptSynced('MessageSent', sent(2)), true, 'one it did not see');
    assert.equal(ledger.waitingLive, 0);
  });

  test('a change from a sync whose live copy arrives late is not delivered again', () => {
    const ledger = new ChangeLedger();
    assert.equal(ledger.acceptSynced('MessageDeleted', { id: 3, conversation_id: 7 }), true);
    assert.equal(ledger.acceptLive('MessageDeleted', { id: 3, conversation_id: 7 }), false);
    assert.equal(ledger.acceptLive('MessageDeleted', { id: 4, conversation_id: 7 }), true);
  });

  test('equal payloads of different changes are counted, not merged: each delivered once', () => {
    // A reaction added, withdrawn, added again: the first and third summaries are equal.
    const ledger = new ChangeLedger();
    const one = { conversation_id: 7, message_id: 1, reactions: [{ emoji: '👍', count: 1, user_ids: [2] }] };
    const none = { conversation_id: 7, message_id: 1, reactions: [] };
    assert.deepEqual([one, none].map((p) => ledger.acceptLive('MessageReactionsUpdated', p)), [true, true]);
    // The sync returns all three: two it saw live, and the third it missed.
    assert.deepEqual([one, none, one].map((p) => ledger.acceptSynced('MessageReactionsUpdated', p)), [false, false, true]);
  });

  test('InboxUpdated is state: the same entry again is not delivered, a changed one is', () => {
    const ledger = new ChangeLedger();
    const entry = { id: 7, unread_count: 1, last_message: sent(1) };
    assert.equal(ledger.acceptLive('InboxUpdated', entry), true);
    assert.equal(ledger.acceptSynced('InboxUpdated', entry), false);
    assert.equal(ledger.acceptSynced('InboxUpdated', { ...entry, unread_count: 2 }), true);
    assert.equal(ledger.acceptLive('InboxUpdated', { ...entry, unread_count: 2 }), false);
    assert.equal(ledger.acceptLive('InboxUpdated', { ...entry, id: 8 }), true, 'another conversation');
  });

  test('typing and presence are not in the feed: always delivered, never held', () => {
    const ledger = new ChangeLedger();
    const typing = { conversation_id: 7, user_id: 2, is_typing: true };
    assert.equal(ledger.acceptLive('UserTyping', typing), true);
    assert.equal(ledger.acceptLive('UserTyping', typing), true);
    assert.equal(ledger.waitingLive, 0);
  });

  test('a live change no sync returned, though it began long after, was before the cursor: it is let go', () => {
    let now = 1_000_000;
    const ledger = new ChangeLedger(() => now);
    ledger.acceptLive('MessageSent', sent(1));
    now += 5_000;
    ledger.acceptLive('MessageSent', sent(2));
    now += 7_000;
    ledger.syncDone(now); // began 12 s after the first, 7 s after the second (the feed may lag a moment)
    assert.equal(ledger.waitingLive, 1);
    assert.equal(ledger.acceptSynced('MessageSent', sent(2)), false, 'the second still waits for its copy');
  });

  test('canonicalJson sorts keys at every depth and leaves arrays in order', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } }), '{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}');
  });
});
