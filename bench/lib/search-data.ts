// The search benchmark's data, loaded with SQL straight into a migrated Parley database (the API would take
// hours for a million messages): users with names, direct conversations and groups, a few "heavy" users in
// many conversations each, and messages whose words follow Zipf's law over a vocabulary of common English
// words, a few accented ones (café, Zürich, ...) and made-up rarer words, as real chat text does: a handful
// of words are in a large share of the messages, most words are rare.
import pg from 'pg';

export interface SearchData {
  readonly users: number;
  readonly conversations: number;
  readonly messages: number;
  /** Users 1..heavyUsers are each in many conversations (the users the benchmark searches as). */
  readonly heavyUsers: number;
  /** Share of the messages soft-deleted. */
  readonly deletedShare: number;
}

/** The most common English words, most common first: the head of the vocabulary. */
export const COMMON_WORDS = (
  'the i you to a and it is that of in me we for my this on have be do not what so with are can just was at ' +
  'but it’s get your if all like know no go they there ok yes will about how one up he out good think now ' +
  'time see got would when then here going did from an want yeah her him was see today back need tomorrow ' +
  'thanks really meeting she them call work right well let sure some also lol more people could where why ' +
  'come make last day week night morning still new great take sorry thing who send check home already ' +
  'again our love said any look much maybe nice after before next first way something had has been said ' +
  'tell find give feel team project later soon done help email message phone office lunch dinner coffee ' +
  'weekend monday friday plan late early hope happy problem question answer idea number money order ' +
  'account ticket release deploy server bug review document report budget client design meeting schedule'
).split(' ');

/** Words with accents or letters outside ASCII, placed in the middle of the vocabulary. */
export const ACCENTED_WORDS = [
  'café', 'résumé', 'naïve', 'jalapeño', 'crème', 'Zürich', 'São', 'façade', 'piñata', 'Ångström', 'über', 'déjà',
  'fiancée', 'smörgåsbord', 'Müller', 'Gödel', 'Dvořák', 'Łódź', 'Ærøskøbing', 'straße', 'Ελλάδα', 'Москва',
];

/**
 * Each accented word as a user types it, lower case and without accents: the form docs/api.md "Search" says finds it
 * ("caf" finds "Café"). Every other word of the vocabulary is typed as it is (lower case, no accents already).
 */
const TYPED: Readonly<Record<string, string>> = {
  café: 'cafe', résumé: 'resume', naïve: 'naive', jalapeño: 'jalapeno', crème: 'creme', Zürich: 'zurich', São: 'sao',
  façade: 'facade', piñata: 'pinata', Ångström: 'angstrom', über: 'uber', déjà: 'deja', fiancée: 'fiancee',
  smörgåsbord: 'smorgasbord', Müller: 'muller', Gödel: 'godel', Dvořák: 'dvorak', Łódź: 'lodz', Ærøskøbing: 'aeroskobing',
  straße: 'strasse', Ελλάδα: 'ελλαδα', Москва: 'москва',
};

/** A vocabulary word as a user types it: lower case, without accents. */
export function typed(word: string): string {
  return TYPED[word] ?? word;
}

const FIRST_NAMES = [
  'Alice', 'Bob', 'Carol', 'David', 'Émilie', 'Frank', 'Grace', 'Hélène', 'Ivan', 'José', 'Karin', 'Léa', 'Mohammed', 'Noël',
  'Olga', 'Pierre', 'Quentin', 'Renée', 'Søren', 'Tomás', 'Ursula', 'Victor', 'Wei', 'Xavier', 'Yasmin', 'Zoë', 'Åsa', 'Björn',
  'Chloé', 'Dmitri', 'Elif', 'Fatima', 'Günther', 'Hana', 'Ines', 'Jürgen', 'Kenji', 'Lucía', 'Mateo', 'Nadia',
];
const LAST_NAMES = [
  'Smith', 'Müller', 'García', 'Nguyen', 'Kowalski', 'Dubois', 'Rossi', 'Johansson', 'Novák', 'Ivanova', 'Jensen', 'Silva',
  'Öztürk', 'Tanaka', 'Kim', 'Brown', 'Lefèvre', 'Fernández', 'Łukasz', 'Schröder', 'Martin', 'Costa', 'Horváth', 'Papadopoulos',
  'Wilson', 'Andersson', 'Peña', 'Čapek', 'Moreau', 'Yilmaz',
];
const SYLLABLES = 'ka lo mi ne ru sa ti vo be da fe gi ho ju ki la me no pu ri so ta ve wa zo bri cla dro fle gra pla stu tre kro mar sel ton vin dul'.split(' ');

/** The size of the vocabulary: the common and accented words, then made-up words to this many. */
export const VOCABULARY = 30_000;

/** The made-up word of a rank (ranks after the real words), as the SQL below makes it. */
export function madeUpWord(rank: number): string {
  const n = SYLLABLES.length;
  const parts = [SYLLABLES[rank % n]!, SYLLABLES[Math.floor(rank / n) % n]!];
  if (rank >= n * n) parts.push(SYLLABLES[Math.floor(rank / (n * n)) % n]!);
  return parts.join('');
}

/** The vocabulary, by rank (1 = the most common word). */
export function vocabulary(): string[] {
  const words = [...new Set(COMMON_WORDS)];
  const head = words.length;
  const accentedEvery = 40;
  for (let i = 1; words.length < VOCABULARY; i++) {
    if (i % accentedEvery === 0 && i / accentedEvery <= ACCENTED_WORDS.length) words.push(ACCENTED_WORDS[i / accentedEvery - 1]!);
    else words.push(madeUpWord(head + i));
  }
  return words;
}

/**
 * Names of users 1..count: a first name of the list and, for half of them, a last name of the list, for the
 * other half a made-up one (thousands of different names, as a real user base has).
 */
export function userNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const u = i + 1;
    const first = FIRST_NAMES[(u * 7) % FIRST_NAMES.length]!;
    const made = madeUpWord(3000 + ((u * 7919) % 20000));
    const last = u % 2 === 0 ? LAST_NAMES[Math.floor((u * 13) / 7) % LAST_NAMES.length]! : made[0]!.toUpperCase() + made.slice(1);
    return `${first} ${last}`;
  });
}

/**
 * Fills a migrated, empty Parley database. Conversations 1..directs are direct, the rest groups (3 to 30
 * members); user h ≤ heavyUsers is in every fifth group and in a share of the direct conversations. Message
 * i (ids in time order over the last year) goes to a conversation drawn with a mild skew, from one of its
 * members, with 1 to 27 words (mostly short) drawn by Zipf's law (rank r with probability ∝ 1/r).
 * The messages' search index is dropped during the load and built again after it (faster than row by row).
 */
export async function loadSearchData(url: string, d: SearchData, onStep: (text: string) => void = () => {}): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const step = async (label: string, text: string, values?: unknown[]) => {
    onStep(label);
    await client.query(text, values);
  };
  try {
    await client.query(`set maintenance_work_mem = '512MB'`);
    await client.query(`set work_mem = '256MB'`);
    const directs = Math.round(d.conversations * 0.7);
    await step('users', `insert into users (id, name) select ordinality, name from unnest($1::text[]) with ordinality name`, [userNames(d.users)]);
    await step('conversations', `
      insert into conversations (id, type, name, direct_key)
      select c, case when c <= $2 then 'direct' else 'group' end, case when c <= $2 then null else 'Group ' || c end, null
      from generate_series(1, $1::int) c`, [d.conversations, directs]);
    await client.query(`select setval('conversations_id_seq', $1)`, [d.conversations]);
    // Direct: two members; in 2 of 5, the first is a heavy user. Groups: 3 to 30 members, and the heavy users of every fifth.
    await step('participants', `
      insert into participants (conversation_id, user_id, role)
      select c, m, 'member' from (
        select c, case when c % 5 < 2 then 1 + c % $3 else 1 + $3 + (c * 7919) % ($2 - $3) end as a,
               1 + $3 + (c * 104729 + 17) % ($2 - $3) as b
        from generate_series(1, $4::int) c
      ) pairs, lateral (values (a), (b)) v(m)
      union all
      select c, 1 + $3 + (c * 7907 + k * 104723) % ($2 - $3), 'member'
      from generate_series($4 + 1, $1::int) c, generate_series(1, 3 + c % 28) k
      union all
      select c, h, 'member' from generate_series($4 + 1, $1::int) c, generate_series(1, $3::int) h where (c * 31 + h) % 5 = 0
      on conflict do nothing`, [d.conversations, d.users, d.heavyUsers, directs]);
    await client.query(`update participants p set role = 'owner' from (
      select conversation_id, min(user_id) as user_id from participants where conversation_id > $1 group by conversation_id) o
      where p.conversation_id = o.conversation_id and p.user_id = o.user_id`, [directs]);
    await client.query(`update conversations c set participant_count = n from (
      select conversation_id, count(*)::int n from participants group by conversation_id) p where p.conversation_id = c.id`);
    await client.query(`update conversations set direct_key = (select min(user_id) || ':' || max(user_id) from participants where conversation_id = id) where type = 'direct'`);

    await client.query(`create temporary table bench_vocab (rank int primary key, word text not null)`);
    await client.query(`insert into bench_vocab select ordinality, word from unnest($1::text[]) with ordinality word`, [vocabulary()]);
    await client.query(`create temporary table bench_members as
      select conversation_id, array_agg(user_id order by user_id) members from participants group by conversation_id`);
    await client.query(`alter table bench_members add primary key (conversation_id)`);

    const index = await client.query<{ def: string }>(`select pg_get_indexdef('messages_search'::regclass) as def`);
    await client.query('drop index messages_search');
    // In chunks, so the progress shows and no statement holds a million rows' words at once.
    const chunk = 100_000;
    for (let from = 1; from <= d.messages; from += chunk) {
      const to = Math.min(d.messages, from + chunk - 1);
      await step(`messages ${from.toLocaleString('en-US')}–${to.toLocaleString('en-US')}`, `
        with m as (
          select i, 1 + floor($2 * power(random(), 1.3))::int as c, 1 + floor(power(random(), 2) * 27)::int as words
          from generate_series($3::int, $4::int) i
        ),
        w as (
          select m.i, g.pos, least($5, floor(exp(random() * ln($5 + 1)))::int) as rank
          from m, generate_series(1, m.words) g(pos)
        ),
        bodies as (
          select w.i, string_agg(v.word, ' ' order by w.pos) as body from w join bench_vocab v on v.rank = w.rank group by w.i
        )
        insert into messages (id, conversation_id, sender_id, body, created_at)
        select m.i, m.c, bm.members[1 + floor(random() * cardinality(bm.members))::int], b.body,
               now() - interval '365 days' * (1 - m.i::float8 / $1)
        from m join bodies b using (i) join bench_members bm on bm.conversation_id = m.c
        order by m.i`, [d.messages, d.conversations, from, to, VOCABULARY]);
    }
    await client.query(`select setval('messages_id_seq', $1)`, [d.messages]);
    await step('deleted messages', `update messages set deleted_at = created_at + interval '1 minute' where random() < $1`, [d.deletedShare]);
    await step('last messages', `update conversations c set last_message_id = l.id, last_activity_at = l.created_at from (
      select distinct on (conversation_id) conversation_id, id, created_at from messages where deleted_at is null order by conversation_id, id desc) l
      where l.conversation_id = c.id`);
    await step('search index', index.rows[0]!.def);
    await step('vacuum analyze', 'vacuum analyze');
  } finally {
    await client.end();
  }
}
