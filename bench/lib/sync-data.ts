// Extra data for the sync benchmark, loaded with SQL on top of the search data (bench/lib/search-data.ts): the
// change feed's recent history, and the groups of the reconnect storm. Participants inserted here get their
// sync_memberships rows from migration 012's trigger, as rows the API writes do.
import pg from 'pg';

export interface StormGroup {
  readonly id: number;
  readonly members: readonly { readonly id: number; readonly name: string }[];
}

/**
 * What the feed would hold of the loaded messages: a MessageSent and an InboxUpdated for each message of the
 * last `days` (the retention), in message order, all before any cursor the benchmark takes. The feed is then
 * not an empty table, as it is not on a server that has run for a while. Returns the changes written.
 */
export async function backfillFeed(url: string, days: number): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rowCount } = await client.query(
      `insert into sync_changes (conversation_id, user_id, type, data, at)
       select m.conversation_id, null, v.type, case when v.type = 'MessageSent' then jsonb_build_object(
                'id', m.id, 'conversation_id', m.conversation_id, 'body', m.body, 'attachment', null,
                'sender', jsonb_build_object('id', u.id, 'name', u.name, 'avatar_url', u.avatar_url),
                'reply_to', null, 'forwarded_from', null, 'created_at', m.created_at) end, m.created_at
       from messages m join users u on u.id = m.sender_id cross join (values (1, 'MessageSent'), (2, 'InboxUpdated')) v(n, type)
       where m.created_at > now() - make_interval(days => $1) and m.deleted_at is null
       order by m.id, v.n`,
      [days],
    );
    await client.query('vacuum analyze sync_changes');
    return rowCount ?? 0;
  } finally {
    await client.end();
  }
}

/**
 * `groups` new groups of `size` new users each (user and conversation ids after the largest ones there), the
 * first member the owner; no messages. Returns the groups with their members.
 */
export async function addGroups(url: string, groups: number, size: number): Promise<StormGroup[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ users: string; conversations: string }>(
      'select (select coalesce(max(id), 0) from users) as users, (select coalesce(max(id), 0) from conversations) as conversations',
    );
    const firstUser = Number(rows[0]!.users) + 1;
    const firstConversation = Number(rows[0]!.conversations) + 1;
    const users = groups * size;
    const name = (id: number) => `Member ${id}`;
    await client.query(`insert into users (id, name) select id, 'Member ' || id from generate_series($1::bigint, $2::bigint) id`, [firstUser, firstUser + users - 1]);
    await client.query(
      `insert into conversations (id, type, name, participant_count)
       select id, 'group', 'Storm ' || id, $3 from generate_series($1::bigint, $2::bigint) id`,
      [firstConversation, firstConversation + groups - 1, size],
    );
    await client.query(`select setval('conversations_id_seq', $1)`, [firstConversation + groups - 1]);
    // Group k (0-based) has users firstUser + k·size … firstUser + k·size + size − 1.
    await client.query(
      `insert into participants (conversation_id, user_id, role)
       select $1::bigint + k, $2::bigint + k * $4 + j, case when j = 0 then 'owner' else 'member' end
       from generate_series(0, $3::int - 1) k, generate_series(0, $4::int - 1) j`,
      [firstConversation, firstUser, groups, size],
    );
    await client.query('analyze participants; analyze sync_memberships');
    return Array.from({ length: groups }, (_, k) => ({
      id: firstConversation + k,
      members: Array.from({ length: size }, (_, j) => ({ id: firstUser + k * size + j, name: name(firstUser + k * size + j) })),
    }));
  } finally {
    await client.end();
  }
}
