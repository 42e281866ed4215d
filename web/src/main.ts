// Entry: read the client config (app key, demo flag), then the sign-in screen or the chat.
import './styles.css';
import { describeError, publicRequest } from './api.js';
import { ChatApp } from './app.js';
import { h } from './dom.js';
import { renderSignIn, storeSession, storedSession, type Session } from './session.js';
import type { ClientConfig } from './types.js';

const root = document.getElementById('app')!;

async function boot(): Promise<void> {
  let config: ClientConfig;
  try {
    config = await publicRequest<ClientConfig>('GET', '/client-config');
  } catch (err) {
    const retry = h('button', { type: 'button' }, 'Try again');
    retry.addEventListener('click', () => void boot());
    root.replaceChildren(h('main', { className: 'sign-in', id: 'main' }, h('div', { className: 'sign-in-card' }, h('h1', {}, 'Parley'), h('p', { role: 'alert' }, describeError(err)), retry)));
    return;
  }

  const signIn = (notice?: string) => {
    storeSession(null);
    renderSignIn(root, config, notice ?? null, (session) => void start(session));
  };

  const start = async (session: Session) => {
    storeSession(session);
    root.replaceChildren(h('p', { className: 'loading', role: 'status' }, 'Loading…'));
    const app = new ChatApp(root, config, session, signIn);
    await app.start();
  };

  const session = storedSession();
  if (session) await start(session);
  else signIn();
}

void boot();
