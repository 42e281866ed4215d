import { sql, type Kysely } from 'kysely';

// A send adds to every other participant's unread counts, a read sets the reader's back: updates of columns no
// index holds, which PostgreSQL writes beside the old row, touching no index (a HOT update), only when the page
// has room. With pages filled to the brim (fillfactor 100), each of a group's members' rows moved to another page
// and went into all three indexes again at every message: ten messages to a group of 10,000, without a vacuum
// between, took 74 ms growing to 125 ms each, 1% of the updates in place, and left the table four times its size.
// Half-filled pages hold a new version of every row they have: every update in place, 13 ms each, and the
// smallest table of the fillfactors tried (50-100). Pages filled from now on keep half free; the pages of an
// existing table gain room as vacuum clears them (docs/deployment.md).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table participants set (fillfactor = 50)`.execute(db);
}
