// The ledger a node records authorizations in (authorizations/local-first.ts): its own sockets' stay in its memory,
// the other nodes' sockets' go to the shared ledger, a subscribe claims from either, and voiding a user's
// authorizations clears both. The shared ledger here is the memory one, standing for Redis's (same interface).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { localFirstLedger } from '../../src/realtime/authorizations/local-first.js';
import { MemoryAuthorizationLedger } from '../../src/realtime/authorizations/memory.js';

const CHANNEL = 'private-chat.conversation.7';

function ledgers() {
  const shared = new MemoryAuthorizationLedger();
  const here = new Set(['1.1', '1.2']);
  return { shared, ledger: localFirstLedger(shared, (socketId) => here.has(socketId), 60_000) };
}

describe('local-first authorization ledger', () => {
  test('an authorization for a socket of this node stays here and is claimed once', async () => {
    const { shared, ledger } = ledgers();
    await ledger.remember('1.1', CHANNEL, '42');
    assert.equal(shared.size, 0, 'nothing written to the shared ledger');
    assert.equal(ledger.localSize, 1);
    assert.equal(await ledger.claim('1.1', CHANNEL), '42');
    assert.equal(await ledger.claim('1.1', CHANNEL), undefined, 'claimed already');
  });

  test('an authorization for another node\'s socket goes to the shared ledger, where that node claims it', async () => {
    const { shared, ledger } = ledgers();
    await ledger.remember('2.1', CHANNEL, '42');
    assert.equal(ledger.localSize, 0);
    // The other node's own local-first ledger finds nothing in its memory and asks the shared one.
    const other = localFirstLedger(shared, () => false, 60_000);
    assert.equal(await other.claim('2.1', CHANNEL), '42');
  });

  test('voiding a user\'s authorizations of a channel clears them here and in the shared ledger, others stay', async () => {
    const { shared, ledger } = ledgers();
    await ledger.remember('1.1', CHANNEL, '42');
    await ledger.remember('2.1', CHANNEL, '42');
    await ledger.remember('1.2', CHANNEL, '43');
    await ledger.remember('1.2', 'private-chat.conversation.8', '42');
    await ledger.forgetUser(CHANNEL, '42');
    assert.equal(await ledger.claim('1.1', CHANNEL), undefined);
    assert.equal(await shared.claim('2.1', CHANNEL), undefined);
    assert.equal(await ledger.claim('1.2', CHANNEL), '43', 'another user\'s');
    assert.equal(await ledger.claim('1.2', 'private-chat.conversation.8'), '42', 'another channel\'s');
  });
});
