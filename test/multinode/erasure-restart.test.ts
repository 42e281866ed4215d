// An erasure survives a crash: a real Parley process erasing a user with 20,000 messages is killed (SIGKILL) midway,
// a new process on the same PostgreSQL database picks the job up where its last batch committed, and completes it:
// nothing of the user's is left, and the messages erased are counted once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { ParleyNode } from '../../testkit/parley-node.js';
import { freshPostgres, type FreshDatabase } from '../../testkit/postgres.js';
import { until } from '../../testkit/wait.js';

describe('erasure killed midway (postgres, two processes one after the other)', { timeout: 360_000 }, () => {
  let database: FreshDatabase;
  let sql: pg.Client;
  const nodes: ParleyNode[] = [];
  before(async () => {
    database = await freshPostgres();
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
  });
  after(async () => {
    for (const node of nodes) node.kill();
    await sql?.end();
    await database?.drop();
  });

  test('kill -9 during the erasure, start again: it completes', async () => {
    const first = await ParleyNode.start('erasure-a', { DATABASE_URL: database.url });
    nodes.push(first);
    const [vera, finn] = [501, 502];
    assert.equal((await first.request(finn, 'GET', '/blocks')).status, 200);
    const dm = await first.request(vera, 'POST', '/conversations', { user_id: finn });
    assert.equal(dm.status, 201, JSON.stringify(dm.body));
    const count = 20_000;
    await sql.query(`insert into messages (conversation_id, sender_id, body) select $1, $2, 'crashtest ' || g from generate_series(1, $3) g`, [dm.body.data.id, vera, count]);

    assert.equal((await first.server('DELETE', `/users/${vera}`)).status, 202);
    const progress = async () => (await sql.query('select messages_erased::int as n, completed_at from erasure_jobs where user_id = $1', [vera])).rows[0];
    await until(async () => (await progress()).n > 0, 30_000, () => 'the erasure never started erasing messages');
    first.kill(); // SIGKILL: no graceful stop
    const midway = await progress();
    assert.equal(midway.completed_at, null, 'killed before it completed');
    assert.ok(midway.n < count, `killed midway (${midway.n} of ${count} erased)`);

    const second = await ParleyNode.start('erasure-b', { DATABASE_URL: database.url });
    nodes.push(second);
    await until(async () => (await progress()).completed_at !== null, 180_000, () => 'the erasure did not complete after the restart');
    assert.equal((await progress()).n, count, 'each message erased once');
    const left = await sql.query(`select count(*)::int as n from messages where sender_id = $1 and (deleted_at is null or body is not null)`, [vera]);
    assert.equal(left.rows[0].n, 0);
    assert.equal((await second.request(finn, 'GET', `/conversations/${dm.body.data.id}/messages`)).body.data.length, 0);
    await second.close();
  });
});
