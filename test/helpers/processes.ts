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

/** A TCP port free on loopback right now (for a server of a test's own). */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

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
