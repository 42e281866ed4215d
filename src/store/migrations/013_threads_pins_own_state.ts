import { sql, type Kysely } from 'kysely';

// Threads, pinned messages and each user's own conversation state (docs/api.md: Threads, Pinned messages, A user's
// own conversation state).
//
// messages.thread_id: the root of the thread a reply is in (null: a message of the conversation itself; a root is
// never in a thread). History pages read messages_main, so a thread of thousands of replies is never scanned
// there. pinned_at / pinned_by: set while the message is pinned.
//
// threads: one row per root that has had a reply: its counts as the API shows them, kept by the sends and
// deletes of replies under the conversation's lock; `repliers` are the latest distinct repliers, newest first.
// thread_members: who takes part in a thread (the root's sender, each replier, each user mentioned in a reply),
// with their read position in it (a reply id; 0: none read), for GET /threads and its unread counts.
//
// participants.archived_at / pinned_at / cleared_at: the participant's own state of the conversation;
// cleared_message_id hides the history up to that message for them alone. hidden_messages: messages a user
// deleted for themselves only.
const statements = [
  `alter table messages
     add column thread_id bigint references messages (id) on delete cascade,
     add column pinned_at timestamptz,
     add column pinned_by bigint references users (id)`,
  `create index messages_main on messages (conversation_id, id) where thread_id is null`,
  `create index messages_of_thread on messages (thread_id, id) where thread_id is not null`,
  `create index messages_pinned on messages (conversation_id, pinned_at) where pinned_at is not null`,
  `create table threads (
     root_id bigint primary key references messages (id) on delete cascade,
     conversation_id bigint not null references conversations (id) on delete cascade,
     reply_count integer not null default 0,
     last_reply_at timestamptz,
     repliers bigint[] not null default '{}'
   )`,
  `create table thread_members (
     root_id bigint not null references messages (id) on delete cascade,
     user_id bigint not null references users (id),
     last_read_reply_id bigint not null default 0,
     last_read_at timestamptz,
     primary key (root_id, user_id)
   )`,
  `create index thread_members_by_user on thread_members (user_id, root_id)`,
  `alter table participants
     add column archived_at timestamptz,
     add column pinned_at timestamptz,
     add column cleared_at timestamptz,
     add column cleared_message_id bigint not null default 0`,
  `create table hidden_messages (
     user_id bigint not null references users (id),
     message_id bigint not null references messages (id) on delete cascade,
     conversation_id bigint not null references conversations (id) on delete cascade,
     hidden_at timestamptz not null default now(),
     primary key (user_id, message_id)
   )`,
  `create index hidden_messages_by_conversation on hidden_messages (user_id, conversation_id, message_id)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
