// A TCP proxy in front of a server, for a network that goes away and comes back: `drop()` cuts every open
// connection, and connections opened while it is down wait unanswered (as over a network that is gone) until
// `restore()`, which lets them through to the server; `drop({ refuse: true })` cuts new ones at once instead
// (as a server that is down).
import { once } from 'node:events';
import { createConnection, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Connections that reached the server through the proxy so far. */
  readonly opened: number;
  drop(options?: { refuse?: boolean }): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, host = '127.0.0.1'): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const held: Socket[] = [];
  let down = false;
  let refuse = false;
  let opened = 0;

  const track = (s: Socket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.on('error', () => undefined);
  };
  const forward = (client: Socket) => {
    if (client.destroyed) return;
    opened++;
    const upstream = createConnection({ port: targetPort, host });
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  };

  const server = createServer((client) => {
    track(client);
    if (down && refuse) client.destroy();
    else if (down) {
      client.pause();
      held.push(client);
    } else forward(client);
  });
  server.listen(0, host);
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    get opened() {
      return opened;
    },
    drop(options = {}) {
      down = true;
      refuse = options.refuse ?? false;
      for (const s of open) s.destroy();
    },
    restore() {
      down = false;
      for (const client of held.splice(0)) forward(client);
    },
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
