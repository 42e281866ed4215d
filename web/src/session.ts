// Signing in: the page takes a Parley user token (pasted), or, only when the operator runs the server with
// CHAT_DEMO=1, asks the server for a token by user id and name. The token is kept in sessionStorage: per tab, so
// two windows can be two users, and gone when the tab closes.
import { describeError, publicRequest } from './api.js';
import { h } from './dom.js';
import type { ClientConfig } from './types.js';

const STORAGE_KEY = 'parley.token';

export interface Session {
  token: string;
  userId: number;
  /** The token's `name` claim, if it has one. */
  name: string | null;
}

/** Reads the user id (sub) and name from a JWT without verifying it: the server verifies every request. */
export function parseToken(raw: string): Session | null {
  const token = raw.trim().replace(/^Bearer\s+/i, '');
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const json = atob(parts[1].replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(parts[1].length / 4) * 4, '='));
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0)))) as { sub?: unknown; name?: unknown };
    if (typeof claims.sub !== 'string' || !/^[1-9]\d{0,15}$/.test(claims.sub)) return null;
    return { token, userId: Number(claims.sub), name: typeof claims.name === 'string' && claims.name !== '' ? claims.name : null };
  } catch {
    return null;
  }
}

export function storedSession(): Session | null {
  const token = sessionStorage.getItem(STORAGE_KEY);
  return token ? parseToken(token) : null;
}

export function storeSession(session: Session | null): void {
  if (session) sessionStorage.setItem(STORAGE_KEY, session.token);
  else sessionStorage.removeItem(STORAGE_KEY);
}

/** The sign-in screen; calls signedIn with a session whose token has the right shape (the server checks it next). */
export function renderSignIn(root: HTMLElement, config: ClientConfig | null, notice: string | null, signedIn: (session: Session) => void): void {
  const error = h('p', { className: 'form-error', role: 'alert', id: 'sign-in-error' }, notice ?? '');

  const tokenInput = h('textarea', {
    id: 'token',
    name: 'token',
    rows: 4,
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'token-help sign-in-error',
  });
  const tokenForm = h(
    'form',
    { className: 'stack', 'aria-labelledby': 'token-heading' },
    h('h2', { id: 'token-heading' }, 'Sign in with a token'),
    h('label', { for: 'token' }, 'Chat token'),
    tokenInput,
    h(
      'p',
      { className: 'hint', id: 'token-help' },
      'A Parley user token from your application. Locally: ',
      h('code', {}, 'npm run token -- 2 --name Bob'),
      ', or the token the server prints at start.',
    ),
    h('button', { type: 'submit' }, 'Sign in'),
  );
  tokenForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const session = parseToken(tokenInput.value);
    if (!session) {
      error.textContent = 'That does not look like a Parley token (a JWT whose sub is a user id).';
      tokenInput.focus();
      return;
    }
    signedIn(session);
  });

  let demoForm: HTMLFormElement | null = null;
  if (config?.demo) {
    const idInput = h('input', { id: 'demo-user-id', name: 'user_id', type: 'number', min: 1, step: 1, required: true, inputmode: 'numeric' });
    const nameInput = h('input', { id: 'demo-name', name: 'name', type: 'text', required: true, maxlength: 200, autocomplete: 'nickname' });
    const submit = h('button', { type: 'submit' }, 'Sign in (demo)');
    demoForm = h(
      'form',
      { className: 'stack demo', 'aria-labelledby': 'demo-heading' },
      h('h2', { id: 'demo-heading' }, 'Demo sign-in'),
      h('p', { className: 'hint' }, 'This server runs with CHAT_DEMO=1: anyone can sign in as any user. Never use it in production.'),
      h('div', { className: 'row' }, h('div', { className: 'field' }, h('label', { for: 'demo-user-id' }, 'User id'), idInput), h('div', { className: 'field grow' }, h('label', { for: 'demo-name' }, 'Name'), nameInput)),
      submit,
    );
    demoForm.addEventListener('submit', async (event) => {
      event.preventDefault();
      submit.disabled = true;
      try {
        const { token } = await publicRequest<{ token: string }>('POST', '/demo/token', { user_id: Number(idInput.value), name: nameInput.value });
        const session = parseToken(token);
        if (session) signedIn(session);
      } catch (err) {
        error.textContent = describeError(err);
      } finally {
        submit.disabled = false;
      }
    });
  }

  root.className = '';
  root.replaceChildren(
    h(
      'main',
      { className: 'sign-in', id: 'main' },
      h('div', { className: 'sign-in-card' }, h('h1', {}, h('span', { className: 'logo', 'aria-hidden': 'true' }, 'P'), 'Parley'), demoForm, tokenForm, error),
    ),
  );
  (demoForm ? (demoForm.querySelector('input') as HTMLElement) : tokenInput).focus();
}
