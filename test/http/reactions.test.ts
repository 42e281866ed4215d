// Reactions (API v1.1): PUT and DELETE /messages/{id}/reactions/{emoji} answer the message's whole summary;
// one emoji (any single grapheme that is one, sequences included) or a short name; at most 20 distinct per
// message; participants only; a blocked direct pair refused; idempotent both ways. History items carry them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, assertHistoryItem, assertKeys, direct, group, history, newUsers, register, send } from './helpers.js';

const path = (messageId: number, emoji: string) => `/messages/${messageId}/reactions/${encodeURIComponent(emoji)}`;

/** Thirty distinct emoji (more than a message may carry). */
const MANY_EMOJI = [
  '😀', '😂', '😍', '😎', '😭', '😡', '👍', '👎', '👏', '🙏', '🔥', '🎉', '💯', '❤️', '💔',
  '🤔', '🙈', '🚀', '🌈', '🍕', '☕', '🐱', '🐶', '⭐', '✅', '❌', '👀', '💡', '🎂', '🥳',
];

for (const database of DATABASES) {
  describe(`reactions (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    const react = (userId: number, messageId: number, emoji: string, headers?: Record<string, string>) =>
      app.request(userId, 'PUT', path(messageId, emoji), undefined, headers);
    const unreact = (userId: number, messageId: number, emoji: string) => app.request(userId, 'DELETE', path(messageId, emoji));

    async function reacted(userId: number, messageId: number, emoji: string): Promise<any[]> {
      const res = await react(userId, messageId, emoji);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data.reactions;
    }

    /** The reactions of a message as its history item shows them. */
    async function reactionsInHistory(userId: number, conversationId: number, messageId: number): Promise<any[]> {
      const item = (await history(app, userId, conversationId)).data.find((m) => m.id === messageId);
      assert.ok(item, `message ${messageId} is in the history`);
      assertHistoryItem(item);
      return item.reactions;
    }

    test('PUT answers {data: {message_id, reactions}} with the whole summary; history items show it', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const message = await send(app, a, id, 'lunch?');

      const res = await react(b, message.id, '👍');
      assert.equal(res.status, 200);
      assertKeys(res.body, ['data']);
      assertKeys(res.body.data, ['message_id', 'reactions']);
      assert.equal(res.body.data.message_id, message.id);
      assert.deepEqual(res.body.data.reactions, [{ emoji: '👍', count: 1, user_ids: [b] }]);

      const both = await reacted(a, message.id, '👍');
      assert.deepEqual(both, [{ emoji: '👍', count: 2, user_ids: [a, b] }], 'user_ids: the latest first');
      const withHeart = await reacted(a, message.id, '❤️');
      assert.deepEqual(withHeart, [{ emoji: '👍', count: 2, user_ids: [a, b] }, { emoji: '❤️', count: 1, user_ids: [a] }], 'in the order first used');

      for (const userId of [a, b]) assert.deepEqual(await reactionsInHistory(userId, id, message.id), withHeart);
      const other = await send(app, b, id, 'no reactions here');
      assert.deepEqual(await reactionsInHistory(a, id, other.id), []);
    });

    test('reacting twice is idempotent: 200, the same summary, no second reaction', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const message = await send(app, a, id);
      const first = await reacted(b, message.id, '🎉');
      const again = await reacted(b, message.id, '🎉');
      assert.deepEqual(again, first);
      assert.deepEqual(again, [{ emoji: '🎉', count: 1, user_ids: [b] }]);
      assert.deepEqual(await reactionsInHistory(a, id, message.id), first);
    });

    test('DELETE withdraws the caller’s reaction only; withdrawing one the caller lacks is a 200 that changes nothing', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const message = await send(app, a, id);
      await reacted(a, message.id, '👍');
      await reacted(b, message.id, '👍');
      await reacted(b, message.id, '😂');

      const res = await unreact(b, message.id, '👍');
      assert.equal(res.status, 200);
      assertKeys(res.body.data, ['message_id', 'reactions']);
      assert.deepEqual(res.body.data, { message_id: message.id, reactions: [{ emoji: '👍', count: 1, user_ids: [a] }, { emoji: '😂', count: 1, user_ids: [b] }] });

      for (const [userId, emoji] of [[b, '👍'], [a, '😂'], [a, '🙈']] as const) {
        const noop = await unreact(userId, message.id, emoji);
        assert.equal(noop.status, 200, `${userId} ${emoji}`);
        assert.deepEqual(noop.body.data, res.body.data, 'nothing changed');
      }

      await unreact(a, message.id, '👍');
      const last = await unreact(b, message.id, '😂');
      assert.deepEqual(last.body.data, { message_id: message.id, reactions: [] });
      assert.deepEqual(await reactionsInHistory(a, id, message.id), []);
    });

    test('one emoji of any kind is accepted: sequences with ZWJ, skin tones, flags, subdivision flags, keycaps, text-style; and short names', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const message = await send(app, a, id);
      const accepted = ['👨‍👩‍👧‍👦', '👍🏽', '🇫🇷', '🏴󠁧󠁢󠁳󠁣󠁴󠁿', '1️⃣', '🏳️‍🌈', '🧑🏽‍💻', '👩🏻‍❤️‍💋‍👨🏼', '❤', '☕', 'thumbs_up', '+1', '-1', 'party-parrot', 'x'.repeat(32)];
      for (const emoji of accepted) {
        const res = await react(b, message.id, emoji);
        assert.equal(res.status, 200, `${JSON.stringify(emoji)}: ${JSON.stringify(res.body)}`);
      }
      assert.deepEqual((await reactionsInHistory(a, id, message.id)).map((r) => r.emoji), accepted, 'stored exactly as sent');
      // An unencoded emoji in the path is percent-encoded by fetch the same way.
      const raw = await app.request(a, 'PUT', `/messages/${message.id}/reactions/👍🏽`);
      assert.equal(raw.status, 200);
      assert.deepEqual(raw.body.data.reactions.find((r: any) => r.emoji === '👍🏽'), { emoji: '👍🏽', count: 2, user_ids: [a, b] });
    });

    test('anything but one emoji or a short name is 422 naming emoji, for PUT and DELETE alike', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const message = await send(app, a, id);
      const refused = [
        '👍👍', // two emoji
        '👍x', 'a\u0301', // an emoji with text, a letter with an accent
        '🇦', // half a flag
        '👍\u200D', '\u200D', '\uFE0F', '\u20E3', // joiners and selectors alone
        'Thumbs_Up', 'thumbs up', 'x'.repeat(33), 'ok!', 'é', '<b>', '%', 'null\u0000',
        '🇫🇷🇩🇪',
      ];
      for (const emoji of refused) {
        for (const method of ['PUT', 'DELETE']) {
          const res = await app.request(b, method, path(message.id, emoji));
          assertError(res, 422, 'validation_failed');
          assert.ok(res.body.errors.emoji, `${method} ${JSON.stringify(emoji)}: ${JSON.stringify(res.body)}`);
        }
      }
      assert.deepEqual(await reactionsInHistory(a, id, message.id), []);
      // An empty emoji is invalid too; a malformed percent-encoding (or half a UTF-8 sequence) is a bad URL.
      assertError(await app.request(b, 'PUT', `/messages/${message.id}/reactions/`), 422, 'validation_failed');
      assertError(await app.request(b, 'PUT', `/messages/${message.id}/reactions/%F0%9F`), 400, 'bad_request');
      assertError(await app.request(b, 'PUT', `/messages/${message.id}/reactions/%E0%A4%A`), 400, 'bad_request');
      assertError(await app.request(b, 'PUT', `/messages/abc/reactions/${encodeURIComponent('👍')}`), 404, 'not_found'); // as for every id that is not one
    });

    test('at most 20 distinct emoji per message: a 21st is 422; more users with an emoji already there are fine', async () => {
      const [a, b, c] = newUsers(3);
      const id = await group(app, a, [b, c]);
      const message = await send(app, a, id);
      for (const emoji of MANY_EMOJI.slice(0, 20)) await reacted(b, message.id, emoji);

      const over = await react(c, message.id, MANY_EMOJI[20]!);
      assertError(over, 422, 'validation_failed');
      assert.ok(over.body.errors.emoji);
      const summary = await reacted(c, message.id, MANY_EMOJI[0]!);
      assert.equal(summary.length, 20);
      assert.deepEqual(summary[0], { emoji: MANY_EMOJI[0], count: 2, user_ids: [c, b] });
      assert.equal((await reacted(b, message.id, MANY_EMOJI[0]!)).length, 20, 'repeating one is still idempotent at the limit');

      // An emoji nobody uses any more frees its place.
      await unreact(b, message.id, MANY_EMOJI[5]!);
      assert.equal((await reacted(c, message.id, MANY_EMOJI[20]!)).length, 20);
      assertError(await react(c, message.id, MANY_EMOJI[21]!), 422, 'validation_failed');
      assert.equal((await reactionsInHistory(a, id, message.id)).length, 20);
    });

    test('user_ids names the 10 latest users; count counts them all', async () => {
      const [owner, ...members] = newUsers(13);
      const id = await group(app, owner, members);
      const message = await send(app, owner, id);
      for (const userId of members) await reacted(userId, message.id, '🔥');
      const [fire] = await reactionsInHistory(owner, id, message.id);
      assert.equal(fire.count, 12);
      assert.deepEqual(fire.user_ids, members.slice(2).reverse());
    });

    test('30 concurrent reactions with 30 different emoji: exactly 20 succeed, the others are 422', async () => {
      const [owner, ...members] = newUsers(6);
      const id = await group(app, owner, members);
      for (let trial = 0; trial < 3; trial++) {
        const message = await send(app, owner, id, `trial ${trial}`);
        const results = await Promise.all(MANY_EMOJI.map((emoji, i) => react(members[i % members.length]!, message.id, emoji)));
        const ok = results.filter((r) => r.status === 200);
        const refused = results.filter((r) => r.status !== 200);
        assert.equal(ok.length, 20, `statuses: ${results.map((r) => r.status).join(',')}`);
        for (const res of refused) {
          assertError(res, 422, 'validation_failed');
          assert.ok(res.body.errors.emoji);
        }
        const accepted = MANY_EMOJI.filter((_, i) => results[i]!.status === 200).sort();
        const shown = await reactionsInHistory(owner, id, message.id);
        assert.deepEqual(shown.map((r) => r.emoji).sort(), accepted);
        assert.ok(shown.every((r) => r.count === 1));
        // Each success answered a summary that holds its own emoji, and never more than 20.
        for (const [i, res] of results.entries()) {
          if (res.status !== 200) continue;
          assert.ok(res.body.data.reactions.length <= 20);
          assert.ok(res.body.data.reactions.some((r: any) => r.emoji === MANY_EMOJI[i]));
        }
      }
    });

    test('only participants: others get 404, as for an unknown message', async () => {
      const [a, b, outsider] = newUsers(3);
      await register(app, outsider);
      const id = await direct(app, a, b);
      const message = await send(app, a, id);
      await reacted(a, message.id, '👍');
      for (const method of ['PUT', 'DELETE']) {
        assertError(await app.request(outsider, method, path(message.id, '👍')), 404, 'not_found');
        assertError(await app.request(a, method, path(987_654_321, '👍')), 404, 'not_found');
      }
      assert.deepEqual(await reactionsInHistory(a, id, message.id), [{ emoji: '👍', count: 1, user_ids: [a] }]);
    });

    test('a member who left a group can no longer react there', async () => {
      const [owner, member] = newUsers(2);
      const id = await group(app, owner, [member]);
      const message = await send(app, owner, id);
      assert.equal((await app.request(member, 'POST', `/groups/${id}/leave`)).status, 204);
      assertError(await react(member, message.id, '👋'), 404, 'not_found');
    });

    test('a deleted message is 404, and its reactions are gone with it', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const message = await send(app, a, id);
      await reacted(b, message.id, '👍');
      assert.equal((await app.request(a, 'DELETE', `/messages/${message.id}`)).status, 204);
      for (const userId of [a, b]) {
        assertError(await react(userId, message.id, '👍'), 404, 'not_found');
        assertError(await unreact(userId, message.id, '👍'), 404, 'not_found');
      }
    });

    test('a direct conversation with a block either way refuses reactions with 403 blocked; groups do not care', async () => {
      const [a, b, c] = newUsers(3);
      const id = await direct(app, a, b);
      const message = await send(app, a, id);
      await reacted(b, message.id, '👍');
      const groupId = await group(app, a, [b, c]);
      const inGroup = await send(app, a, groupId);

      assert.equal((await app.request(a, 'POST', '/blocks', { user_id: b })).status, 200);
      for (const userId of [a, b]) {
        assertError(await react(userId, message.id, '😡'), 403, 'blocked');
        assertError(await unreact(userId, message.id, '👍'), 403, 'blocked');
      }
      assert.deepEqual(await reactionsInHistory(a, id, message.id), [{ emoji: '👍', count: 1, user_ids: [b] }]);
      assert.deepEqual(await reacted(b, inGroup.id, '👍'), [{ emoji: '👍', count: 1, user_ids: [b] }]);

      assert.equal((await app.request(a, 'DELETE', `/blocks/${b}`)).status, 200);
      assert.deepEqual((await unreact(b, message.id, '👍')).body.data.reactions, []);
    });

    test('no token is 401', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const message = await send(app, a, id);
      assertError(await app.request(null, 'PUT', path(message.id, '👍')), 401, 'unauthenticated');
      assertError(await app.request(null, 'DELETE', path(message.id, '👍')), 401, 'unauthenticated');
    });
  });
}
