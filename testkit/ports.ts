// Ports for the servers a test or benchmark starts.
import { createServer } from 'node:net';

/** A port free right now on 127.0.0.1 (the OS picks it; the listener is closed again at once). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}
