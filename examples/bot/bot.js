// A Parley bot: it answers "ping" with "pong" in every conversation it is in, as a reply to the ping (in a
// thread, in that thread). It watches the conversations it is in when it starts, and each new one as its
// InboxUpdated arrives. See README.md beside this file, and docs/client-sdk.md for the client it uses.
//
//   PARLEY_URL=http://localhost:8080 PARLEY_TOKEN=<the bot user's token> PARLEY_APP_KEY=<app key> node bot.js
import { ParleyClient, ParleyError } from '@parley/client';

const baseUrl = process.env.PARLEY_URL || 'http://localhost:8080';
const token = process.env.PARLEY_TOKEN;
const appKey = process.env.PARLEY_APP_KEY;
if (!token || !appKey) {
  console.error('Set PARLEY_TOKEN (a token for the bot user) and PARLEY_APP_KEY (the app key Parley prints at start). See README.md.');
  process.exit(2);
}

const chat = new ParleyClient({ baseUrl, token, appKey });

/** "ping", in any case, with any spaces around it. */
const isPing = (body) => body?.trim().toLowerCase() === 'ping';

async function answer(message) {
  // Never to itself: its own messages come back over the socket too.
  if (message.sender.id === chat.userId || !isPing(message.body)) return;
  try {
    await chat.messages.send(message.conversation_id, {
      body: 'pong',
      reply_to_id: message.id,
      ...(message.thread_id ? { thread_id: message.thread_id } : {}),
    });
    console.log(`pong to ${message.sender.name} in conversation ${message.conversation_id}`);
  } catch (err) {
    // A ParleyError says why (403 blocked, 429 rate_limited, ...): the bot logs it and goes on.
    console.error(`no pong in conversation ${message.conversation_id}: ${err instanceof ParleyError ? `${err.status} ${err.code} ${err.message}` : err}`);
  }
}

const watched = new Set();
async function watch(conversationId) {
  if (watched.has(conversationId)) return;
  watched.add(conversationId);
  try {
    await chat.watch(conversationId); // subscribes, then catches up on what came before the subscription
  } catch (err) {
    watched.delete(conversationId);
    console.error(`cannot watch conversation ${conversationId}: ${err.message}`);
  }
}

// Handlers first: connect() catches up before it resolves, through these same handlers.
chat.on('MessageSent', (message) => void answer(message));
chat.on('ThreadReplySent', ({ message }) => void answer(message));
chat.on('InboxUpdated', (conversation) => void watch(conversation.id)); // new conversations too
chat.on('GroupMembershipRevoked', ({ conversation_id }) => {
  // Removed, left or deleted: the server ended the subscription; forget it, so being added again watches anew.
  watched.delete(conversation_id);
  chat.unwatch(conversation_id);
});
chat.onStateChange((state) => console.log(`connection: ${state}`));

await chat.connect();
let cursor;
do {
  const page = await chat.conversations.list({ cursor, limit: 100 });
  await Promise.all(page.data.map((conversation) => watch(conversation.id)));
  cursor = page.meta.next_cursor ?? undefined;
} while (cursor);
console.log(`Bot user ${chat.userId} is listening in ${watched.size} conversation(s). Say "ping" to it.`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    chat.disconnect();
    process.exit(0);
  });
}
