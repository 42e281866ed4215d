// A minimal page on @parley/client: sign in with a token, pick a conversation, read it live, send to it.
// docs/client-sdk.md explains each call. The page, the API and the socket share one origin (vite.config.js
// forwards /api/ and /app/ to Parley), so the client's baseUrl is the page's own.
import { ParleyClient, ParleyError } from '@parley/client';

const $ = (id) => document.getElementById(id);
const status = (text) => ($('status').textContent = text);
const describe = (err) => (err instanceof ParleyError ? `${err.status} ${err.code}: ${err.message}` : String(err));

let chat = null;
/** The conversation shown. */
let open = null;

/** A message in the list, in id order; one already there is replaced (it can come live and from a sync). */
function show(message) {
  if (message.conversation_id !== open) return;
  const li = document.createElement('li');
  li.dataset.id = String(message.id);
  const who = document.createElement('span');
  who.className = 'who';
  who.textContent = message.sender.name;
  li.append(who, message.body ?? '(attachment)');
  const list = $('messages');
  const items = [...list.children];
  const same = items.find((item) => Number(item.dataset.id) === message.id);
  if (same) return same.replaceWith(li);
  list.insertBefore(li, items.find((item) => Number(item.dataset.id) > message.id) ?? null);
}

function title(conversation) {
  if (conversation.type === 'group') return conversation.name;
  return conversation.participants_preview.find((p) => p.id !== chat.userId)?.name ?? 'Direct conversation';
}

/** The inbox entry as an option of the picker (added, or its title updated). */
function listConversation(conversation) {
  const select = $('conversations');
  let option = [...select.options].find((o) => Number(o.value) === conversation.id);
  if (!option) select.append((option = new Option('', String(conversation.id))));
  option.textContent = `${title(conversation)}${conversation.unread_count ? ` (${conversation.unread_count})` : ''}`;
}

async function openConversation(id) {
  if (open !== null) chat.unwatch(open);
  open = id;
  $('messages').replaceChildren();
  await chat.watch(id); // first the channel, then the history: nothing falls between the two
  const page = await chat.messages.list(id, { limit: 30 });
  page.data.forEach(show);
}

$('sign-in').addEventListener('submit', async (event) => {
  event.preventDefault();
  chat?.disconnect();
  try {
    // The app key of Parley's socket server: printed at start; the bundled web client's config has it too.
    const { app_key: appKey } = await (await fetch('/api/chat/v1/client-config')).json();
    chat = new ParleyClient({ baseUrl: location.origin, token: $('token').value.trim(), appKey });
    chat.onStateChange((state) => status(`Connection: ${state}`));
    chat.on('MessageSent', show);
    chat.on('MessageUpdated', show);
    chat.on('MessageDeleted', ({ id }) => document.querySelector(`#messages [data-id="${id}"]`)?.remove());
    chat.on('InboxUpdated', listConversation);
    // The inbox first: connect() catches up from its sync cursor, so nothing after it is missed.
    const inbox = await chat.conversations.list();
    await chat.connect(); // chat.userId is known from here on
    inbox.data.forEach(listConversation);
    if (inbox.data[0]) await openConversation(inbox.data[0].id);
  } catch (err) {
    status(describe(err));
  }
});

$('conversations').addEventListener('change', (event) => void openConversation(Number(event.target.value)).catch((err) => status(describe(err))));

$('composer').addEventListener('submit', async (event) => {
  event.preventDefault();
  if (!chat || open === null) return;
  const input = $('body');
  try {
    show(await chat.messages.send(open, { body: input.value })); // this page's own message: shown from the answer
    input.value = '';
  } catch (err) {
    status(describe(err));
  }
});
