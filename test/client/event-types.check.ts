// A type test, compiled by `npm run typecheck` (tsconfig.json includes test/), never run: `chat.on` takes only
// the event names of docs/events.md and hands each handler its own payload type. Each `@ts-expect-error` line
// must be an error; if the SDK's types let one through, tsc reports the directive as unused and the check fails.
import { ParleyClient, type ApiAnswer, type ApiBody, type ParleyEvents } from '../../packages/client/src/index.js';

export function eventTypes(chat: ParleyClient): void {
  chat.on('MessageSent', (message, meta) => {
    const body: string | null = message.body;
    const sender: number = message.sender.id;
    const source: 'live' | 'sync' = meta.source;
    // @ts-expect-error MessageSent carries no edited_at (MessageUpdated does)
    void message.edited_at;
    // @ts-expect-error a wrong payload key
    void message.text;
    void [body, sender, source];
  });
  chat.on('InboxUpdated', (conversation) => {
    const unread: number = conversation.unread_count;
    // @ts-expect-error InboxUpdated is a ConversationResource: no conversation_id
    void conversation.conversation_id;
    void unread;
  });
  chat.on('MessageDeleted', (event) => {
    const id: number = event.id;
    // @ts-expect-error MessageDeleted has id and conversation_id only
    void event.body;
    void id;
  });
  // @ts-expect-error the class name ConversationInboxUpdated is not what is broadcast: InboxUpdated is
  chat.on('ConversationInboxUpdated', () => undefined);
  // @ts-expect-error not an event of docs/events.md
  chat.on('MessageSend', () => undefined);
  // @ts-expect-error a handler for another event's payload
  chat.on('UserTyping', (typing: ParleyEvents['MessageSent']) => void typing);
  chat.on('UserTyping', (typing) => {
    const isTyping: boolean = typing.is_typing;
    void isTyping;
  });
}

export async function callTypes(chat: ParleyClient): Promise<void> {
  // @ts-expect-error send takes body, not text
  await chat.messages.send(1, { text: 'hi' });
  // @ts-expect-error a message id is a number
  await chat.messages.edit('1', 'hi');
  const page = await chat.messages.list(1, { before: 10, limit: 20 });
  const reactions: { emoji: string }[] = page.data[0]!.reactions;
  void reactions;
}

export async function apiTypes(chat: ParleyClient): Promise<void> {
  const blocks = await chat.request<ApiAnswer<'/blocks', 'get'>>('GET', '/blocks');
  const blocked: number[] = blocks.messaging_blocked_user_ids;
  // @ts-expect-error not a key of GET /blocks' answer
  void blocks.blocked_ids;
  const pin: ApiBody<'/groups/{id}', 'patch'> = { slow_mode_s: 10 };
  // @ts-expect-error slow_mode_s is a number
  const wrong: ApiBody<'/groups/{id}', 'patch'> = { slow_mode_s: 'ten' };
  // @ts-expect-error not a path of docs/openapi.json
  type Nowhere = ApiAnswer<'/nowhere', 'get'>;
  void [blocked, pin, wrong, null as unknown as Nowhere];
}
