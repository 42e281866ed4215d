// InboxUpdated payloads for a large group are encoded from one shared template: each reader's JSON must be
// exactly what JSON.stringify makes of its ConversationResource, whatever the shared part holds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readerEncoder } from '../../src/chat/inbox.js';
import { conversationResource, type ReaderState, type SharedConversation } from '../../src/store/read-model.js';

const sender = { id: 7, name: 'Ann "the" Sender', avatar_url: null };

function shared(body: string | null): SharedConversation {
  return {
    id: 3,
    type: 'group',
    name: 'Team "unread_count":0,"last_read_at":null,',
    avatar_url: null,
    participant_count: 3,
    participants_preview: [{ id: 7, name: 'Ann', avatar_url: null, role: 'owner' }],
    last_message:
      body === null
        ? null
        : { id: 11, conversation_id: 3, body, attachment: null, sender, reply_to: null, forwarded_from: null, created_at: '2026-01-02T03:04:05.006Z', edited_at: null },
    created_at: new Date('2026-01-01T00:00:00.000Z'),
    updated_at: new Date('2026-01-02T03:04:05.006Z'),
    slow_mode_s: 0,
    frozen: false,
  };
}

const own = { unread_mention_count: 0, muted: false, muted_until: null };
const readers: ReaderState[] = [
  { user_id: 7, unread_count: 0, last_read_at: new Date('2026-01-02T03:04:05.006Z'), ...own },
  { user_id: 8, unread_count: 12, last_read_at: null, ...own, unread_mention_count: 3, muted: true },
  { user_id: 9, unread_count: 1_000_000, last_read_at: new Date(0), ...own },
];

test('each reader’s InboxUpdated JSON is exactly JSON.stringify of its ConversationResource', () => {
  for (const body of ['hello', '"unread_count":0,"last_read_at":null, in a body', 'ünïcødé ✓ \n\t"quoted"', null]) {
    const s = shared(body);
    const encoder = readerEncoder(s);
    assert.ok(encoder, 'the template has the expected layout');
    for (const reader of readers) assert.equal(`${encoder.shared.head}${encoder.middle(reader)}${encoder.shared.tail}`, JSON.stringify(conversationResource(s, reader)));
  }
});
