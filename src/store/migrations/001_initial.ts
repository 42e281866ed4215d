import { sql, type Kysely } from 'kysely';

// One statement per query: PGlite's extended protocol takes a single statement at a time.
const statements = `
    create table users (
      id bigint primary key,
      name text not null default '',
      avatar_url text,
      last_seen_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create table conversations (
      id bigserial primary key,
      type text not null check (type in ('direct', 'group')),
      name text,
      avatar_url text,
      direct_key text unique,
      participant_count integer not null default 0,
      last_message_id bigint,
      last_activity_at timestamptz not null default now(),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create table participants (
      conversation_id bigint not null references conversations (id) on delete cascade,
      user_id bigint not null references users (id),
      role text not null default 'member' check (role in ('owner', 'admin', 'member')),
      joined_at timestamptz not null default now(),
      last_read_message_id bigint not null default 0,
      last_read_at timestamptz,
      unread_count integer not null default 0,
      primary key (conversation_id, user_id)
    );
    create index participants_by_user on participants (user_id, conversation_id);
    create table attachments (
      id bigserial primary key,
      uploader_id bigint not null references users (id),
      name text not null,
      mime_type text not null,
      size bigint not null,
      storage_key text not null,
      created_at timestamptz not null default now()
    );
    create table messages (
      id bigserial primary key,
      conversation_id bigint not null references conversations (id) on delete cascade,
      sender_id bigint not null references users (id),
      body text,
      attachment_id bigint references attachments (id),
      reply_to_id bigint references messages (id) on delete set null,
      forwarded_from_message_id bigint,
      forwarded_from_conversation_id bigint,
      forwarded_from_sender_id bigint references users (id),
      client_message_id text,
      created_at timestamptz not null default now(),
      edited_at timestamptz,
      deleted_at timestamptz
    );
    create index messages_by_conversation on messages (conversation_id, id);
    create unique index messages_client_id on messages (conversation_id, sender_id, client_message_id)
      where client_message_id is not null;
    create index messages_by_attachment on messages (attachment_id) where attachment_id is not null;
    create table blocks (
      blocker_id bigint not null references users (id),
      blocked_id bigint not null references users (id),
      created_at timestamptz not null default now(),
      primary key (blocker_id, blocked_id)
    );
    create index blocks_by_blocked on blocks (blocked_id);
  `;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements.split(';').map((s) => s.trim()).filter(Boolean)) {
    await sql.raw(statement).execute(db);
  }
}
