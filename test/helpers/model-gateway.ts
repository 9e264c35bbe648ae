// A small OpenAI-compatible model gateway on 127.0.0.1 for tests: deterministic embeddings
// derived from the text (a hashed bag of words, so shared words mean similar vectors).
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ModelGateway {
  /** Base URL including /v1, as MODEL_GATEWAY_URL expects. */
  url: string;
  requests: { path: string; authorization: string | undefined; body: unknown }[];
  close(): Promise<void>;
}

export function fakeEmbedding(text: string, dimensions: number): number[] {
  const vector: number[] = Array.from({ length: dimensions }, () => 0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const digest = createHash('sha256').update(word).digest();
    vector[digest[0]! % dimensions]! += digest[1]! % 2 === 0 ? 1 : -1;
  }
  if (!vector.some((v) => v !== 0)) vector[0] = 1;
  return vector;
}

export async function startModelGateway(options: { dimensions: number }): Promise<ModelGateway> {
  const requests: ModelGateway['requests'] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const body = text ? JSON.parse(text) : undefined;
      requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      if (req.method === 'POST' && req.url === '/v1/embeddings') {
        const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
        const data = input.map((t, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(t, options.dimensions) }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', model: body.model, data }));
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
