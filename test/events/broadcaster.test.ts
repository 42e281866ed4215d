// The broadcaster hands a dispatch's events to the fanout in order; events next to each other that share the head
// and tail of their JSON (a group's InboxUpdated, one per member) go as one publishEach when the fanout has it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { createBroadcaster, type Fanout } from '../../src/events/broadcaster.js';
import { event, jsonOf, type DomainEvent } from '../../src/events/catalog.js';

function recordingFanout(withEach: boolean) {
  const calls: unknown[] = [];
  const fanout: Fanout = {
    publish: (channels, name, data, except) => void calls.push(['publish', channels, name, data, except]),
    unsubscribeUser: () => {},
    disconnectUser: () => {},
    ...(withEach ? { publishEach: (channels, name, head, tail, middles, except) => void calls.push(['each', channels, name, head, tail, middles, except]) } : {}),
  };
  return { fanout, calls };
}

const shared = { head: '{"id":5,"unread_count":', tail: ',"name":"Team"}' };
const inbox = (userId: number, unread: number) => event('ConversationInboxUpdated', userId, { id: 5, unread_count: unread, name: 'Team' } as never, { shared, middle: String(unread) });
const events: DomainEvent[] = [
  event('UserTyping', 5, { conversation_id: 5, user_id: 1, is_typing: true } as never),
  inbox(1, 0),
  inbox(2, 3),
  inbox(3, 1),
  event('ConversationInboxUpdated', 4, { id: 6, unread_count: 2 } as never),
];

test('events sharing their JSON\'s head and tail go as one publishEach, in their place among the others', async () => {
  const { fanout, calls } = recordingFanout(true);
  await createBroadcaster(fanout, pino({ level: 'silent' })).dispatch(events, '1.2');
  assert.deepEqual(calls, [
    ['publish', ['private-chat.conversation.5'], 'UserTyping', jsonOf(events[0]!), '1.2'],
    ['each', ['private-chat.user.1', 'private-chat.user.2', 'private-chat.user.3'], 'InboxUpdated', shared.head, shared.tail, ['0', '3', '1'], '1.2'],
    ['publish', ['private-chat.user.4'], 'InboxUpdated', '{"id":6,"unread_count":2}', '1.2'],
  ]);
});

test('a fanout without publishEach gets each event on its own, its JSON whole and exactly its payload\'s', async () => {
  const { fanout, calls } = recordingFanout(false);
  await createBroadcaster(fanout, pino({ level: 'silent' })).dispatch(events);
  assert.equal(calls.length, 5);
  for (const [i, e] of events.entries()) assert.deepEqual(JSON.parse((calls[i] as string[])[3]!), e.payload);
  assert.equal((calls[2] as string[])[3], '{"id":5,"unread_count":3,"name":"Team"}');
});
