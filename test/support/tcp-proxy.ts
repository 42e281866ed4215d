// A TCP proxy in front of a server, for a network that goes away and comes back: `drop()` cuts every open
// connection and refuses new ones (as a lost network does), `restore()` lets them through again.
import { once } from 'node:events';
import { createConnection, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Connections opened through the proxy so far. */
  readonly opened: number;
  drop(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, host = '127.0.0.1'): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let down = false;
  let opened = 0;
  const server = createServer((client) => {
    if (down) return void client.destroy();
    opened++;
    const upstream = createConnection({ port: targetPort, host });
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  server.listen(0, host);
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    get opened() {
      return opened;
    },
    drop() {
      down = true;
      for (const s of open) s.destroy();
    },
    restore() {
      down = false;
    },
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
