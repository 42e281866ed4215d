// The host app's webhook endpoint for the ingest bench, in a process of its own (bench/lib/webhooks.ts starts
// it): answers 200 to every POST and counts the MessageSent webhooks. In its own process, its work never holds
// up the bench's send loop, as a host app's receiver, on its own machine, would not.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let received = 0;
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if ((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string }).type === 'MessageSent') received++;
    res.writeHead(200).end();
  });
});
server.listen(0, '127.0.0.1', () => process.send!({ type: 'listening', port: (server.address() as AddressInfo).port }));
process.on('message', (m: { type: string }) => {
  if (m.type === 'count') process.send!({ type: 'count', received });
});
process.on('disconnect', () => process.exit(0));
