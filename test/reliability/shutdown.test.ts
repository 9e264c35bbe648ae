// SIGTERM as an orchestrator sends it, to the real `lattice serve` process: idle keep-alive
// connections do not hold it open, a request in flight is answered, and past the deadline the
// process exits 0 anyway. The figures are bounds on behaviour (a keep-alive socket used to hold the
// process for fastify's 72 s), not speed measurements.
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, REDIS_URL, SERVER_DATABASE_URL } from '../helpers/harness.js';
import { listeningPort, startCli, type LongRunning } from '../helpers/processes.js';

/** The server's log line for the slow POST: its head has arrived, so the request is in flight. */
const ARRIVED = /"url":"\/api\/v1\/projects\/demo\/admin\/memory"[^\n]*"msg":"incoming request"/;

describe('shutdown of lattice serve', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function serve(env: Record<string, string> = {}): Promise<{ server: LongRunning; port: string; apiKey: string }> {
    const dataDir = await mkdtemp(join(tmpdir(), 'lattice-shutdown-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    // PORT=0: the system gives a free port, which the server logs (a port picked here could be
    // taken by another process before the server binds it).
    const server = startCli(['serve'], { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', POOL_MAX_THREADS: '1', LOG_LEVEL: 'info', ...env });
    cleanups.push(async () => server.child.kill('SIGKILL'));
    const [, apiKey] = (await server.waitFor(/^\s+(lat_\S+)\s*$/m)) as unknown as [string, string];
    return { server, port: String(await listeningPort(server)), apiKey };
  }

  const exitOf = (server: LongRunning) =>
    new Promise<{ code: number | null; ms: number }>((resolve) => {
      const start = Date.now();
      server.child.once('close', (code) => resolve({ code, ms: Date.now() - start }));
    });

  /** A POST whose body arrives in two parts: the first now, the rest when `finish` is called. */
  function slowPost(p: string, path: string, apiKey: string, body: string): { socket: Socket; response: Promise<string>; finish(): void } {
    const socket = connect(Number(p), '127.0.0.1');
    let response = '';
    const done = new Promise<string>((resolve) => {
      socket.on('data', (d) => (response += d.toString()));
      socket.on('close', () => resolve(response));
      socket.on('error', () => resolve(response));
    });
    const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const cut = Math.floor(body.length / 2);
    socket.write(head + body.slice(0, cut));
    return { socket, response: done, finish: () => socket.write(body.slice(cut)) };
  }

  it('closes idle keep-alive connections, answers the request in flight, and exits 0', async () => {
    const { server, port: p, apiKey } = await serve();
    // An idle keep-alive connection, as a client's connection pool leaves one.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(async () => agent.destroy());
    await new Promise<void>((resolve, reject) => {
      request({ host: '127.0.0.1', port: Number(p), path: '/healthz', agent }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      })
        .on('error', reject)
        .end();
    });
    const inFlight = slowPost(p, '/api/v1/projects/demo/admin/memory', apiKey, JSON.stringify({ content: 'Written during shutdown' }));
    await server.waitFor(ARRIVED);
    const exited = exitOf(server);
    server.child.kill('SIGTERM');
    await server.waitFor(/shutting down/);
    inFlight.finish();
    expect(await inFlight.response).toMatch(/^HTTP\/1\.1 201/);
    const { code, ms } = await exited;
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
  }, 60_000);

  it('exits 0 at the deadline when a request never completes', async () => {
    const { server, port: p, apiKey } = await serve({ SHUTDOWN_TIMEOUT_MS: '1500' });
    const stuck = slowPost(p, '/api/v1/projects/demo/admin/memory', apiKey, JSON.stringify({ content: 'never finished' }));
    cleanups.push(async () => stuck.socket.destroy());
    await server.waitFor(ARRIVED);
    const exited = exitOf(server);
    server.child.kill('SIGTERM');
    const { code, ms } = await exited;
    expect(code).toBe(0);
    expect(ms).toBeGreaterThanOrEqual(1400);
    expect(ms).toBeLessThan(10_000);
    expect(server.output()).toMatch(/still busy after 1500 ms/);
  }, 60_000);

  it.skipIf(!REDIS_URL || !SERVER_DATABASE_URL)('lattice worker also stops on SIGTERM and exits 0', async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const worker = startCli(['worker'], { DATABASE_URL: database.url!, REDIS_URL: REDIS_URL!, QUEUE_PREFIX: `lattice-shutdown-${process.pid}`, POOL_MAX_THREADS: '1', LOG_LEVEL: 'info' });
    cleanups.push(async () => worker.child.kill('SIGKILL'));
    await worker.waitFor(/consuming jobs/);
    const exited = exitOf(worker);
    worker.child.kill('SIGTERM');
    const { code, ms } = await exited;
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
  }, 60_000);
});
