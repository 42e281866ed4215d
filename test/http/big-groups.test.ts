// Big groups on PostgreSQL: every statement whose size grows with a group stays within PostgreSQL's 65,535
// parameters. Deleting a group of 5,000 with two webhook URLs writes 10,000 webhook rows (seven parameters
// each); adding 5,000 members at once inserts 5,000 participants. Both work, and each member gets their row.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { newUsers } from './helpers.js';
import { startTestApp, type TestApp } from '../support/app.js';

const MEMBERS = 5_000;

describe('big groups (postgres)', () => {
  let app: TestApp;
  let sql: pg.Client;
  let receiver: Server;
  before(async () => {
    // Every webhook is accepted: the test counts the rows written, not their delivery.
    receiver = createServer((_req, res) => res.end()).listen(0, '127.0.0.1');
    await new Promise((resolve) => receiver.once('listening', resolve));
    const { port } = receiver.address() as AddressInfo;
    app = await startTestApp({
      database: 'postgres',
      env: { CHAT_WEBHOOK_URLS: `http://127.0.0.1:${port}/a,http://127.0.0.1:${port}/b`, CHAT_WEBHOOK_SECRET: 'x'.repeat(32) },
    });
    sql = new pg.Client({ connectionString: app.config.databaseUrl! });
    await sql.connect();
  });
  after(async () => {
    await sql?.end();
    await app?.close();
    receiver?.close();
  });

  /** Users Parley knows, written straight into the database (registering 5,000 through the API takes minutes). */
  async function knownUsers(n: number): Promise<number[]> {
    const ids = newUsers(n);
    await sql.query(`insert into users (id, name) select id, 'User ' || id from unnest($1::bigint[]) as id`, [ids]);
    return ids;
  }

  test(`deleting a group of ${MEMBERS} with two webhook URLs: 204, and each member is told`, async () => {
    const [owner, ...members] = await knownUsers(MEMBERS);
    const created = await app.request(owner!, 'POST', '/groups', { name: 'Everyone', user_ids: members });
    assert.equal(created.status, 201, JSON.stringify(created.body).slice(0, 300));
    const id = created.body.data.id;

    const deleted = await app.request(owner!, 'DELETE', `/groups/${id}`);
    assert.equal(deleted.status, 204, JSON.stringify(deleted.body));
    const { rows } = await sql.query(
      `select count(*)::int as n, count(distinct payload->'data'->>'user_id')::int as users from outbox
        where type = 'GroupMembershipRevoked' and (payload->'data'->>'conversation_id')::bigint = $1`,
      [id],
    );
    // Delivered rows are deleted: count what was written, delivered or not, through the feed instead when gone.
    const feed = await sql.query(`select count(distinct user_id)::int as users from sync_changes where type = 'GroupMembershipRevoked' and conversation_id = $1`, [id]);
    assert.equal(feed.rows[0].users, MEMBERS, 'every member has their GroupMembershipRevoked');
    assert.ok(rows[0].n <= MEMBERS * 2, 'at most one webhook row per member and URL');
    assert.equal((await app.request(owner!, 'GET', `/conversations/${id}`)).status, 404, 'the group is gone');
  });

  test(`adding ${MEMBERS} members at once`, async () => {
    const [owner, first, ...others] = await knownUsers(MEMBERS + 1);
    const created = await app.request(owner!, 'POST', '/groups', { name: 'Growing', user_ids: [first] });
    assert.equal(created.status, 201);
    const id = created.body.data.id;
    const added = await app.request(owner!, 'POST', `/groups/${id}/participants`, { user_ids: others });
    assert.ok(added.status === 200 || added.status === 201, JSON.stringify(added.body).slice(0, 300));
    const { rows } = await sql.query(`select count(*)::int as n from participants where conversation_id = $1`, [id]);
    assert.equal(rows[0].n, MEMBERS + 1);
    const order = await sql.query(`select user_id::int from participants where conversation_id = $1 and role = 'member' order by joined_at, user_id`, [id]);
    assert.deepEqual(order.rows.map((r) => r.user_id), [first, ...others], 'members join in the order given');
  });
});
