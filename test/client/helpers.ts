// What the client tests share: one real Parley (PGlite: the SDK's behaviour does not depend on the database),
// ParleyClients of its users that are disconnected after each test, and waiting for something to happen.
import { ParleyClient, type ParleyClientOptions } from '../../packages/client/src/index.js';
import { startTestApp, type TestApp } from '../support/app.js';

export async function startClientTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const app = await startTestApp({ database: 'pglite', env });
  // Users exist once they have signed in once.
  for (const id of [1, 2, 3]) await app.request(id, 'GET', '/conversations');
  return app;
}

const open: ParleyClient[] = [];

/** A client of user `userId` (token from the app unless given), closed by `disconnectClients`. */
export async function clientOf(app: TestApp, userId: number, options: Partial<ParleyClientOptions> = {}): Promise<ParleyClient> {
  const client = new ParleyClient({
    baseUrl: app.baseUrl,
    token: options.token ?? (await app.token(userId, `User ${userId}`)),
    appKey: app.config.broadcast.appKey,
    ...options,
  });
  open.push(client);
  return client;
}

export function disconnectClients(): void {
  while (open.length > 0) open.pop()!.disconnect();
}

/** Polls until `check` stops throwing, at most `timeout` ms. */
export async function eventually<T>(check: () => T | Promise<T>, timeout = 5_000): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}
