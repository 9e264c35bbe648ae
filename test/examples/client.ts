// The public clients' transport, as the example applications use it (SDK-WIRE.md section 1): every
// call goes over real HTTP to a listening Lattice at {base}/api/v1/projects/{projectId}{path}, with
// `Authorization: Bearer <key>`. The TypeScript client sends `Content-Type: application/json` only
// with a body (POST, PUT, PATCH) and drops undefined query values; the Python client sends the
// content type on every request and names itself in User-Agent. A non-2xx answer is thrown, as the
// clients throw it, with the status and the server's message.
import type { AddressInfo } from 'node:net';
import type { Harness } from '../helpers/harness.js';

export type Flavour = 'typescript' | 'python';

export class ClientError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`HTTP ${status}: ${typeof body === 'object' && body !== null && 'message' in body ? String((body as { message: unknown }).message) : JSON.stringify(body)}`);
  }
}

export interface ExampleClient {
  post<T = unknown>(path: string, body: unknown): Promise<T>;
  get<T = unknown>(path: string, query?: Record<string, string | number | boolean | undefined>): Promise<T>;
}

/** Makes the harness's app listen on a free local port (once) and answers its base URL. */
export async function listen(h: Harness): Promise<string> {
  if (!h.app.server.listening) await h.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
}

export function exampleClient(base: string, project: { projectId: string; apiKey: string }, flavour: Flavour): ExampleClient {
  const root = `${base}/api/v1/projects/${project.projectId}`;
  const headers = (withBody: boolean): Record<string, string> => ({
    authorization: `Bearer ${project.apiKey}`,
    ...(withBody || flavour === 'python' ? { 'content-type': 'application/json' } : {}),
    ...(flavour === 'python' ? { 'user-agent': 'memmesh-python/0.4.0' } : {}),
  });
  async function send<T>(method: string, url: string, body?: unknown): Promise<T> {
    const res = await fetch(url, { method, headers: headers(body !== undefined), ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    if (!res.ok) throw new ClientError(res.status, parsed);
    return parsed as T;
  }
  return {
    post: (path, body) => send('POST', `${root}${path}`, body),
    get: (path, query = {}) => {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
      const qs = params.toString();
      return send('GET', `${root}${path}${qs ? `?${qs}` : ''}`);
    },
  };
}
