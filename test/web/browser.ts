// Shared harness for the web client's browser tests: the Vite build, a real Parley (CHAT_DEMO=1, PGlite) and
// Debian's headless Chromium driven by playwright-core, with the same launch flags, page checks (page errors,
// CSP violations) and demo sign-in as chat-client.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';

export const CHROMIUM = '/usr/bin/chromium';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const DESKTOP = { width: 1180, height: 760 };
export const skip = existsSync(CHROMIUM) ? false : `Chromium is not installed at ${CHROMIUM} (apt-get install -y chromium): browser tests skipped`;

/** Builds web/ into web/dist with Vite, so the test always runs the current client. */
export function buildWebClient(): void {
  const vite = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  const result = spawnSync(process.execPath, [vite, 'build', 'web', '--logLevel', 'warn'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(result.status, 0, `vite build web failed:\n${result.stdout}\n${result.stderr}`);
}

/** Waits until a locator (first match) shows the text. */
export async function seeText(locator: Locator, text: string | RegExp): Promise<void> {
  await locator.filter({ hasText: text }).first().waitFor({ state: 'visible' });
}

export interface Harness {
  /** The running Parley; a new one after restartApp(). */
  app: TestApp;
  /**
   * Stops Parley (as a deployment does: sockets closed with 4200) and starts a new one on the same port with the
   * same data directory (PGlite, secrets): tokens and pages stay valid. `whileDown` runs in between.
   */
  restartApp(whileDown?: () => Promise<void>): Promise<void>;
  browser: Browser;
  /** Page errors and CSP violations of every page; a test's end asserts it is empty. */
  pageErrors: string[];
  openPage(): Promise<Page>;
  /** The demo sign-in, as a person does it; resolves when the socket is live. */
  signIn(page: Page, userId: number, name: string): Promise<void>;
  close(): Promise<void>;
}

/** `env`: more settings for Parley (e.g. CHAT_BLOCKED_WORDS). */
export async function startHarness(extraEnv: Record<string, string> = {}): Promise<Harness> {
  buildWebClient();
  // A data directory of our own (startTestApp removes only the one it made), so a restart keeps the database.
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-web-'));
  const env = { ...extraEnv, CHAT_DEMO: '1', CHAT_DATA_DIR: dataDir };
  let app = await startTestApp({ env });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const pageErrors: string[] = [];
  return {
    get app() {
      return app;
    },
    async restartApp(whileDown) {
      const port = app.port;
      await app.close();
      await whileDown?.();
      app = await startTestApp({ env: { ...env, PORT: String(port) } });
    },
    browser,
    pageErrors,
    async openPage() {
      const context = await browser.newContext({ viewport: DESKTOP, locale: 'en-GB', timezoneId: 'UTC', colorScheme: 'light' });
      const page = await context.newPage();
      page.setDefaultTimeout(6_000);
      page.on('pageerror', (err) => pageErrors.push(`${err.name}: ${err.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) pageErrors.push(message.text());
      });
      await page.addInitScript(
        "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));",
      );
      return page;
    },
    async signIn(page, userId, name) {
      await page.goto(app.baseUrl);
      await page.getByLabel('User id').fill(String(userId));
      await page.getByLabel('Name').fill(name);
      await page.getByRole('button', { name: 'Sign in (demo)' }).click();
      await page.locator('.connection[data-state="connected"]').waitFor();
    },
    async close() {
      await browser.close();
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const item = (page: Page, title: string) => page.locator('.conversation-item').filter({ has: page.locator('.item-title', { hasText: title }) });
export const messages = (page: Page) => page.locator('#message-list .message');
/** The message whose own text (not a reply quote) has this text. */
export const message = (page: Page, text: string) => messages(page).filter({ has: page.locator('.body', { hasText: text }) });

/** Alice (user 1) and Bob (user 2) signed in on a page each, their direct conversation open on both. */
export async function openDirectPair(harness: Harness): Promise<{ alice: Page; bob: Page; conversationId: number }> {
  await harness.app.token(1, 'Alice');
  await harness.app.token(2, 'Bob');
  const alice = await harness.openPage();
  const bob = await harness.openPage();
  await harness.signIn(alice, 1, 'Alice');
  await harness.signIn(bob, 2, 'Bob');
  const { body } = await harness.app.request(1, 'POST', '/conversations', { user_id: 2 });
  await item(alice, 'Bob').click();
  await item(bob, 'Alice').click();
  await alice.locator('.thread[data-conversation-id]').waitFor();
  await bob.locator('.thread[data-conversation-id]').waitFor();
  return { alice, bob, conversationId: body.data.id as number };
}
