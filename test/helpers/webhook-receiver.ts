// A real HTTP server on 127.0.0.1 that records every request it gets: the webhook target of the
// alert tests. `respond` answers the n-th request (0-based); the default is 204.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Receiver {
  /** `${base}/hook` */
  url: string;
  base: string;
  received: Received[];
  server: Server;
  close(): Promise<void>;
}

export async function startReceiver(
  respond: (res: ServerResponse, n: number, req: IncomingMessage) => void = (res) => res.writeHead(204).end(),
): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const n = received.length;
      received.push({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      respond(res, n, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/hook`,
    base,
    received,
    server,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
