// A deterministic local model gateway for tests: a real HTTP server speaking the OpenAI-compatible
// protocol (chat completions, audio transcriptions, embeddings), answering through handlers the
// test gives, recording every request, and failing on demand (a status for the next calls, a slow
// answer, a gateway that refuses structured output).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatBody {
  model: string;
  messages: { role: string; content: string | { type: string; text?: string; image_url?: { url: string } }[] }[];
  response_format?: { type: string; json_schema?: { name: string; schema: unknown } };
  max_tokens?: number;
}

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  /** JSON bodies parsed; multipart bodies as their fields and the file's bytes. */
  body: unknown;
}

export interface GatewayServer {
  url: string;
  requests: RecordedRequest[];
  /** Answers the next `count` calls with this status (and headers), then behaves again. */
  failNext(count: number, status: number, headers?: Record<string, string>): void;
  /** Waits this long before answering the next `count` calls. */
  delayNext(count: number, ms: number): void;
  /** Answers 400 to any chat request carrying response_format (a gateway without structured output). */
  refuseStructuredOutput: boolean;
  /** What a chat request is answered: the assistant text (an object is sent as its JSON). */
  chat: (body: ChatBody) => string | object;
  transcribe: (file: { bytes: Buffer; type: string; model: string }) => string;
  close(): Promise<void>;
}

/** The text of a chat body's messages, joined (image parts named by their data URL's type). */
export function chatText(body: ChatBody): string {
  return body.messages
    .map((m) => (typeof m.content === 'string' ? m.content : m.content.map((p) => p.text ?? `[image ${p.image_url?.url.slice(5, p.image_url.url.indexOf(';'))}]`).join(' ')))
    .join('\n');
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/** A multipart/form-data body's parts: name, filename, content type and bytes. */
function multipart(body: Buffer, contentType: string): { name: string; filename?: string; type?: string; bytes: Buffer }[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  if (!boundary) return [];
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts: { name: string; filename?: string; type?: string; bytes: Buffer }[] = [];
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const next = body.indexOf(delimiter, at + delimiter.length);
    if (next < 0) break;
    const part = body.subarray(at + delimiter.length + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, split).toString('utf8');
    parts.push({
      name: /name="([^"]*)"/.exec(head)?.[1] ?? '',
      filename: /filename="([^"]*)"/.exec(head)?.[1],
      type: /content-type:\s*([^\r\n]+)/i.exec(head)?.[1],
      bytes: part.subarray(split + 4),
    });
    at = next;
  }
  return parts;
}

export async function startGateway(): Promise<GatewayServer> {
  let failures: { status: number; headers: Record<string, string> }[] = [];
  let delays: number[] = [];
  const gateway: GatewayServer = {
    url: '',
    requests: [],
    failNext(count, status, headers = {}) {
      failures = [...failures, ...Array.from({ length: count }, () => ({ status, headers }))];
    },
    delayNext(count, ms) {
      delays = [...delays, ...Array.from({ length: count }, () => ms)];
    },
    refuseStructuredOutput: false,
    chat: () => 'ok',
    transcribe: () => '',
    close: async () => {},
  };
  const server: Server = createServer(async (request, response) => {
    const raw = await readBody(request);
    const path = (request.url ?? '').replace(/^\/v1/, '');
    const contentType = request.headers['content-type'] ?? '';
    const body: unknown = contentType.startsWith('multipart/') ? multipart(raw, contentType) : raw.length > 0 ? JSON.parse(raw.toString('utf8')) : undefined;
    gateway.requests.push({ path, headers: request.headers, body });
    const delay = delays.shift();
    if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      if (response.destroyed) return;
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(payload));
    };
    const failure = failures.shift();
    if (failure) return send(failure.status, { error: { message: `injected ${failure.status}` } }, failure.headers);
    if (path === '/chat/completions') {
      const chat = body as ChatBody;
      if (gateway.refuseStructuredOutput && chat.response_format) return send(400, { error: { message: 'response_format is not supported' } });
      const answer = gateway.chat(chat);
      const content = typeof answer === 'string' ? answer : JSON.stringify(answer);
      const prompt = Math.ceil(chatText(chat).length / 4);
      const completion = Math.ceil(content.length / 4);
      return send(200, { id: 'chatcmpl-test', model: chat.model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } });
    }
    if (path === '/audio/transcriptions') {
      const parts = body as { name: string; type?: string; bytes: Buffer }[];
      const file = parts.find((p) => p.name === 'file');
      const model = parts.find((p) => p.name === 'model')?.bytes.toString('utf8') ?? '';
      if (!file) return send(400, { error: { message: 'file is required' } });
      return send(200, { text: gateway.transcribe({ bytes: file.bytes, type: file.type ?? '', model }), usage: { type: 'tokens', input_tokens: 10, output_tokens: 5, total_tokens: 15 } });
    }
    return send(404, { error: { message: `no route ${path}` } });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  gateway.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  gateway.close = () => new Promise((resolve) => server.close(() => resolve()));
  return gateway;
}
