// Runs the built CLI (dist/src/cli.js) as a separate process, as an operator would.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { projectRoot } from '../../src/platform/project-root.js';

export const CLI = join(projectRoot(), 'dist', 'src', 'cli.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment a CLI child gets: only what the test passes, plus PATH. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'silent', ...env };
}

export function runCli(args: string[], env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`lattice ${args.join(' ')} timed out; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface LongRunning {
  child: ChildProcess;
  output(): string;
  /** Resolves when the combined output matches `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

export function startCli(args: string[], env: Record<string, string | undefined>): LongRunning {
  const child = spawn(process.execPath, [CLI, ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const waiters = new Set<() => void>();
  const onData = (d: Buffer) => {
    output += d.toString();
    for (const check of waiters) check();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${pattern}; output so far:\n${output}`));
        }, timeoutMs);
        const check = () => {
          const match = output.match(pattern);
          if (match) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(match);
          }
        };
        waiters.add(check);
        check();
        void exited.then(() => {
          if (waiters.has(check)) {
            waiters.delete(check);
            clearTimeout(timer);
            reject(new Error(`process exited before ${pattern}; output:\n${output}`));
          }
        });
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

const isFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/** Ports handed out by reservedPort in this process so far. */
let handedOut = 0;
const BLOCK = 500;

/**
 * A loopback port for a server of a test's own that cannot take port 0 and keeps its port across
 * restarts (Postgres, Redis). Below Linux's ephemeral range (32768 and up), where outgoing
 * connections take their local ports, so none can land on it while the server is down; and in a
 * block of its own per vitest worker (VITEST_POOL_ID), so that two files running at once never
 * pick the same one. The next port of the block if something else holds one. A server that can
 * listen on port 0 should (`lattice serve` logs the port it got).
 */
export async function reservedPort(): Promise<number> {
  const worker = Number(process.env.VITEST_POOL_ID ?? process.env.VITEST_WORKER_ID ?? 0) % 24;
  const base = 20_000 + worker * BLOCK;
  for (let tries = 0; tries < BLOCK; tries++) {
    const port = base + (handedOut++ % BLOCK);
    if (await isFree(port)) return port;
  }
  throw new Error(`no free port in ${base}-${base + BLOCK - 1}`);
}

/** Reads the port `lattice serve` logs as it starts listening (run it with PORT=0). */
export async function listeningPort(server: LongRunning): Promise<number> {
  const [, port] = (await server.waitFor(/lattice listening on [^\s:]+:(\d+)/, 120_000)) as unknown as [string, string];
  return Number(port);
}

/**
 * Polls `${base}/readyz` until it answers 200 (the encoder loads at start, seconds on a busy
 * machine); answers the ready body. Bounded by polls, not by a clock: each poll is an answer of the
 * server's own, 100 ms apart, at most `polls` of them.
 */
export async function waitUntilReady(base: string, polls = 1200): Promise<Record<string, unknown>> {
  let last = '';
  for (let i = 0; i < polls; i++) {
    const res = await fetch(`${base}/readyz`);
    last = await res.text();
    if (res.status === 200) return JSON.parse(last) as Record<string, unknown>;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${base}/readyz did not answer 200 after ${polls} polls; last answer: ${last}`);
}
