// Small helpers shared by the HTTP suites: fresh user ids, the resource keys of docs/api.md, and one-line
// fixtures (a direct conversation, a group, a message, an upload) made through the public API only.
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.js';
import { requestJson } from '../../testkit/http.js';

/** Distinct user ids: every test takes its own, so tests sharing one app stay independent. */
let lastUserId = 1000;
export function newUsers<N extends number>(count: N): number[] & { length: N } {
  return Array.from({ length: count }, () => ++lastUserId) as number[] & { length: N };
}

export const USER_KEYS = ['avatar_url', 'id', 'name'];
export const ATTACHMENT_KEYS = ['height', 'id', 'mime_type', 'name', 'size', 'thumbnail_url', 'url', 'width'];
export const MESSAGE_KEYS = ['attachment', 'body', 'conversation_id', 'created_at', 'edited_at', 'forwarded_from', 'id', 'reply_to', 'sender'];
export const REPLY_KEYS = ['body', 'deleted', 'id', 'sender'];
export const FORWARDED_KEYS = ['conversation_id', 'message_id', 'sender'];
export const PARTICIPANT_KEYS = ['avatar_url', 'id', 'name', 'role'];
/** The ConversationResource as InboxUpdated carries it (v1's keys, never more). */
export const CONVERSATION_EVENT_KEYS = [
  'avatar_url', 'created_at', 'id', 'last_message', 'last_read_at', 'name', 'participant_count',
  'participants_preview', 'type', 'unread_count', 'updated_at',
];
/** The ConversationResource of the HTTP API (v1.1): v1's keys plus the caller's mention count and mute. */
export const CONVERSATION_KEYS = [...CONVERSATION_EVENT_KEYS, 'muted', 'muted_until', 'unread_mention_count', 'archived_at', 'pinned_at', 'cleared_at', 'slow_mode_s', 'frozen'];
/** A history item (v1.1): the MessageResource plus its reactions and mentions. */
export const HISTORY_ITEM_KEYS = [...MESSAGE_KEYS, 'mentioned_user_ids', 'reactions', 'thread_id', 'thread', 'pinned_at', 'pinned_by'];
export const PRESENCE_KEYS = ['is_online', 'last_seen_at', 'user_id'];

/** ISO 8601 UTC with milliseconds, e.g. 2026-11-20T09:30:00.000Z */
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function assertKeys(value: unknown, keys: readonly string[], what = 'object'): void {
  assert.ok(value !== null && typeof value === 'object', `${what} is an object`);
  assert.deepEqual(Object.keys(value as object).sort(), [...keys].sort(), `${what} has exactly the keys docs/api.md lists`);
}

/** A MessageResource with exactly the keys and nested shapes of docs/api.md. */
export function assertMessage(message: any): void {
  assertKeys(message, MESSAGE_KEYS, 'MessageResource');
  assertKeys(message.sender, USER_KEYS, 'sender');
  if (message.attachment !== null) assertKeys(message.attachment, ATTACHMENT_KEYS, 'attachment');
  if (message.reply_to !== null) {
    assertKeys(message.reply_to, REPLY_KEYS, 'reply_to');
    assertKeys(message.reply_to.sender, USER_KEYS, 'reply_to.sender');
  }
  if (message.forwarded_from !== null) {
    assertKeys(message.forwarded_from, FORWARDED_KEYS, 'forwarded_from');
    assertKeys(message.forwarded_from.sender, USER_KEYS, 'forwarded_from.sender');
  }
  assert.match(message.created_at, ISO_UTC);
  if (message.edited_at !== null) assert.match(message.edited_at, ISO_UTC);
}

/** A history item: the MessageResource's keys and shapes, plus reactions and mentioned_user_ids (v1.1), its thread and pin (v1.2). */
export function assertHistoryItem(item: any): void {
  assertKeys(item, HISTORY_ITEM_KEYS, 'history item');
  const { reactions, mentioned_user_ids, thread_id, thread, pinned_at, pinned_by, ...message } = item;
  assert.ok(thread_id === null || Number.isInteger(thread_id));
  if (thread !== null) assertKeys(thread, ['last_reply_at', 'participant_ids', 'reply_count'], 'thread');
  assert.ok(pinned_at === null || ISO_UTC.test(pinned_at));
  assert.ok(pinned_by === null || Number.isInteger(pinned_by));
  assertMessage(message);
  assert.ok(Array.isArray(reactions) && Array.isArray(mentioned_user_ids));
  for (const r of reactions) assertKeys(r, ['count', 'emoji', 'user_ids'], 'reaction');
}

/** A ConversationResource with exactly the keys and nested shapes of docs/api.md. */
export function assertConversation(conversation: any): void {
  assertKeys(conversation, CONVERSATION_KEYS, 'ConversationResource');
  for (const p of conversation.participants_preview) assertKeys(p, PARTICIPANT_KEYS, 'participant');
  if (conversation.last_message !== null) assertMessage(conversation.last_message);
  assert.match(conversation.created_at, ISO_UTC);
  assert.match(conversation.updated_at, ISO_UTC);
  if (conversation.last_read_at !== null) assert.match(conversation.last_read_at, ISO_UTC);
}

/** An error response: the status, `{message, code}` and, on 422 only, `errors` naming fields. */
export function assertError(res: { status: number; body: any }, status: number, code?: string): void {
  assert.equal(res.status, status, `status ${res.status}, body ${JSON.stringify(res.body)}`);
  assert.ok(res.body !== null && typeof res.body === 'object', `a JSON error body, got ${JSON.stringify(res.body)}`);
  assert.equal(typeof res.body.message, 'string');
  assert.ok(res.body.message.length > 0);
  assert.match(res.body.code, /^[a-z][a-z_]*$/);
  if (code !== undefined) assert.equal(res.body.code, code);
  if (status === 422) {
    assertKeys(res.body, ['code', 'errors', 'message'], '422 body');
    for (const messages of Object.values(res.body.errors)) {
      assert.ok(Array.isArray(messages) && messages.length > 0 && messages.every((m) => typeof m === 'string'));
    }
  } else {
    assertKeys(res.body, ['code', 'message'], 'error body');
  }
}

/** Makes users known to the service (a first request with their token creates them). */
export async function register(app: TestApp, ...userIds: number[]): Promise<void> {
  for (const id of userIds) assert.equal((await app.request(id, 'GET', '/blocks')).status, 200);
}

/** The direct conversation between a and b (both registered first); returns its id. */
export async function direct(app: TestApp, a: number, b: number): Promise<number> {
  await register(app, b);
  const res = await app.request(a, 'POST', '/conversations', { user_id: b });
  assert.ok(res.status === 201 || res.status === 200, JSON.stringify(res.body));
  return res.body.data.id;
}

/** A group owned by owner with the given members (registered first); returns its id. */
export async function group(app: TestApp, owner: number, members: number[], name = 'Group'): Promise<number> {
  await register(app, ...members);
  const res = await app.request(owner, 'POST', '/groups', { name, user_ids: members });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.id;
}

/** Sends a message and returns its MessageResource. */
export async function send(app: TestApp, userId: number, conversationId: number, body: Record<string, unknown> | string = 'hello'): Promise<any> {
  const payload = typeof body === 'string' ? { body } : body;
  const res = await app.request(userId, 'POST', `/conversations/${conversationId}/messages`, payload);
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data;
}

export async function conversation(app: TestApp, userId: number, conversationId: number): Promise<any> {
  const res = await app.request(userId, 'GET', `/conversations/${conversationId}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.data;
}

export async function history(app: TestApp, userId: number, conversationId: number, query = ''): Promise<{ data: any[]; meta: { next_cursor: string | null } }> {
  const res = await app.request(userId, 'GET', `/conversations/${conversationId}/messages${query}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

/** A raw request with any token (or none): for the auth suites, where the harness's cached tokens do not fit. */
export async function call(
  app: TestApp,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  return requestJson(`${app.api}${path}`, { method, token, body, headers });
}

/** Uploads one file as multipart/form-data, the way a browser's FormData does. */
export async function upload(
  app: TestApp,
  userId: number,
  content: string | Uint8Array<ArrayBuffer>,
  filename = 'note.txt',
  type = 'text/plain',
): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append('file', new Blob([content], { type }), filename);
  const response = await fetch(`${app.api}/attachments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await app.token(userId)}` },
    body: form,
  });
  return { status: response.status, body: await response.json() };
}
