// The example bot (examples/bot) against a real Parley node, as a user runs it: its own process, with nothing
// but the three settings its README names. A real user sends "ping" in a conversation the bot was in before it
// started, and in a group the bot is added to while it runs; each time one "pong" comes back, as a reply.
// One run on the embedded default (PGlite): the bot speaks HTTP and sockets only, the database changes nothing.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ParleyNode } from '../../testkit/parley-node.js';
import { spawnTracked, Tail } from '../../testkit/processes.js';
import { ROOT } from '../../testkit/root.js';
import { SECRETS } from '../../testkit/secrets.js';
import { sleep, until } from '../../testkit/wait.js';
import type { ChildProcess } from 'node:child_process';

const ALICE = 1;
const BOT = 900;

interface Message {
  id: number;
  body: string | null;
  sender: { id: number };
  reply_to: { id: number } | null;
}

describe('examples/bot: answers "ping" with "pong"', () => {
  let node: ParleyNode;
  let bot: { child: ChildProcess; output: Tail };

  before(async () => {
    node = await ParleyNode.start('ping-bot');
  });
  after(async () => {
    bot?.child.kill('SIGTERM');
    await node?.close();
  });

  const history = async (conversationId: number): Promise<Message[]> => {
    const { status, body } = await node.request(ALICE, 'GET', `/conversations/${conversationId}/messages?limit=50`);
    assert.equal(status, 200, JSON.stringify(body));
    return body.data as Message[];
  };

  /** Alice sends "ping" and waits for the bot's one "pong" in reply to it. */
  const pingPong = async (conversationId: number) => {
    const sent = await node.request(ALICE, 'POST', `/conversations/${conversationId}/messages`, { body: 'ping' });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const pongs = async () => (await history(conversationId)).filter((m) => m.sender.id === BOT && m.body === 'pong' && m.reply_to?.id === sent.body.data.id);
    await until(async () => (await pongs()).length > 0, 15_000, () => `no pong in conversation ${conversationId}; the bot wrote:\n${bot.output}`);
    await sleep(300); // a second pong would come about as fast as the first
    assert.equal((await pongs()).length, 1, `one pong, not more; the bot wrote:\n${bot.output}`);
  };

  test('in a conversation it was in before it started, and in a group it is added to while it runs', async () => {
    // The bot's user, created by the host app's backend (docs/api.md: PUT /users/{id} with the server key).
    const created = await node.server('PUT', `/users/${BOT}`, { name: 'Ping bot' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const direct = await node.request(ALICE, 'POST', '/conversations', { user_id: BOT });
    assert.equal(direct.status, 201, JSON.stringify(direct.body));

    bot = spawnTracked(process.execPath, [join(ROOT, 'examples', 'bot', 'bot.js')], {
      cwd: join(ROOT, 'examples', 'bot'),
      env: { PATH: process.env.PATH ?? '', PARLEY_URL: node.baseUrl, PARLEY_TOKEN: await node.token(BOT, 'Ping bot'), PARLEY_APP_KEY: SECRETS.BROADCAST_APP_KEY },
    });
    await until(() => /listening/i.test(String(bot.output)), 20_000, () => `the bot did not start:\n${bot.output}`);

    await pingPong(direct.body.data.id);
    // Something else is no ping: no answer.
    await node.request(ALICE, 'POST', `/conversations/${direct.body.data.id}/messages`, { body: 'pingpong' });

    const group = await node.request(ALICE, 'POST', '/groups', { name: 'Bots welcome', user_ids: [BOT] });
    assert.equal(group.status, 201, JSON.stringify(group.body));
    await pingPong(group.body.data.id); // sent at once: the bot learns of the group from InboxUpdated
    assert.equal((await history(direct.body.data.id)).filter((m) => m.sender.id === BOT).length, 1, 'no answer to "pingpong"');
  });
});
