// The mixed workload of the load runs (test/reliability/soak.ts, bench/concurrency.ts) through a
// project's HTTP API: search 40%, save 30%, emit 20%, typed ingest of 10 observations 10%. Seeded,
// so two runs send the same requests in the same order (with one client; several interleave as the
// server answers them).
import { makeTexts, memoryTemplates, mulberry32, queryTemplates, sleep } from './support.js';

export type Op = 'search' | 'save' | 'emit' | 'ingest';
export const MIX: [Op, number][] = [['search', 0.4], ['save', 0.3], ['emit', 0.2], ['ingest', 0.1]];
export const OPS: readonly Op[] = MIX.map(([op]) => op);

/** The typed attribute the ingest requests write (declared by prepareProject). */
const ATTRIBUTE = 'soak_score';
/**
 * A request still unanswered after this counts as unanswered (status 0): longer than the server's
 * own REQUEST_TIMEOUT_MS (60 s), so only a server that hangs is cut short, and a run stays bounded.
 */
const REQUEST_TIMEOUT_MS = 120_000;

export interface Sample {
  op: Op;
  /** 0 when there was no answer (refused, reset, timed out). */
  status: number;
  ms: number;
  /** The start of the body of an answer that is not 2xx, to tell what failed. */
  error?: string;
}

/** A project as a client addresses it: its API base and its key. */
export interface Project {
  id: string;
  base: string;
  headers: Record<string, string>;
}

export const projectAt = (origin: string, id: string, apiKey: string): Project => ({
  id,
  base: `${origin}/api/v1/projects/${id}`,
  headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
});

export interface Workload {
  /** The next operation, drawn with the mix's shares. */
  nextOp(): Op;
  /** Sends one request of `op` to `project`; never throws. */
  send(project: Project, op: Op): Promise<Sample>;
}

export function createWorkload(seed = 17): Workload {
  const random = mulberry32(seed);
  let counter = 0;
  const people = ['Ana', 'Bruno', 'Chen', 'Dara', 'Eli', 'Farah', 'Goran', 'Hana'];
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  // The memory benchmark's realistic sentences and questions (bench/support.ts), so that words
  // are as varied as in real memories rather than a handful repeated in every one.
  const contents = makeTexts(40_000, 5, memoryTemplates);
  const questions = makeTexts(20_000, 6, queryTemplates);
  const bodies: Record<Op, () => [string, unknown]> = {
    search: () => ['/admin/memory/search', { query: questions[counter++ % questions.length], limit: 10 }],
    save: () => ['/admin/memory', { content: contents[counter++ % contents.length], subject: { kind: 'user', externalId: pick(people) } }],
    emit: () => ['/lattice/events/emit', { eventType: 'soak.tick', payloadJson: JSON.stringify({ n: ++counter }), subject: { kind: 'user', externalId: pick(people) } }],
    ingest: () => [
      '/memory-typed/observations',
      {
        observations: Array.from({ length: 10 }, () => ({
          attributeKey: ATTRIBUTE, subjectKind: 'user', subjectExternalId: pick(people), valueNumeric: Math.round(random() * 100), observedAt: new Date(Date.now() - Math.floor(random() * 1e9)).toISOString(),
        })),
      },
    ],
  };
  return {
    nextOp: () => {
      let r = random();
      for (const [op, share] of MIX) if ((r -= share) < 0) return op;
      return 'search';
    },
    send: async (project, op) => {
      const [path, body] = bodies[op]();
      const start = performance.now();
      try {
        const res = await fetch(`${project.base}${path}`, { method: 'POST', headers: project.headers, body: JSON.stringify(body), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        const answer = await res.arrayBuffer();
        const sample: Sample = { op, status: res.status, ms: performance.now() - start };
        if (res.status < 200 || res.status >= 300) sample.error = new TextDecoder().decode(answer.slice(0, 300));
        return sample;
      } catch (error) {
        return { op, status: 0, ms: performance.now() - start, error: error instanceof Error ? error.message : String(error) };
      }
    },
  };
}

/**
 * Readies a project for the workload: declares the typed attribute, saves `memories` memories for
 * search to find (one at a time), and sends one request of each other kind, so that a workload the
 * service refuses fails here rather than as a table of errors.
 */
export async function prepareProject(workload: Workload, project: Project, memories: number): Promise<void> {
  const attribute = await fetch(`${project.base}/memory-typed/attributes`, {
    method: 'POST', headers: project.headers, body: JSON.stringify({ attributeKey: ATTRIBUTE, dataType: 'numeric' }),
  });
  if (attribute.status >= 300) throw new Error(`could not declare the attribute in ${project.id}: ${attribute.status} ${await attribute.text()}`);
  for (let i = 0; i < memories; i++) {
    const seeded = await workload.send(project, 'save');
    if (seeded.status !== 201) throw new Error(`seeding a memory in ${project.id} answered ${seeded.status} ${seeded.error ?? ''}`);
  }
  for (const op of ['search', 'emit', 'ingest'] as const) {
    const probe = await workload.send(project, op);
    if (probe.status >= 300) throw new Error(`a ${op} request answered ${probe.status}: the workload is wrong (${probe.error ?? ''})`);
  }
}

/**
 * Waits until every memory of the projects has its embedding, or `limitMs` has passed; answers the
 * milliseconds waited. A save answers before its embedding when the encoder is busy, and the job
 * that embeds it later costs the server as much: a load run counts that time, or lets it finish
 * before the next part.
 */
export async function waitForEmbeddings(projects: readonly Project[], limitMs: number): Promise<{ ms: number; cleared: boolean }> {
  const start = Date.now();
  for (let polls = 0; polls <= limitMs / 500 + 1; polls++) {
    const left = await Promise.all(
      projects.map(async (project) => {
        const res = await fetch(`${project.base}/admin/memory/stats`, { headers: project.headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        if (!res.ok) throw new Error(`memory stats of ${project.id} answered ${res.status}: ${await res.text()}`);
        const stats = (await res.json()) as { embedding: { embedded: number; total: number } };
        return stats.embedding.total - stats.embedding.embedded;
      }),
    );
    if (left.every((n) => n <= 0)) return { ms: Date.now() - start, cleared: true };
    if (Date.now() - start > limitMs) break;
    await sleep(500);
  }
  return { ms: Date.now() - start, cleared: false };
}

/** The answers that were not 2xx, by status: "3 × 500, 1 × no answer", or "0". */
export function errorsByStatus(samples: readonly Sample[]): string {
  const errors = new Map<number, number>();
  for (const s of samples) if (s.status < 200 || s.status >= 300) errors.set(s.status, (errors.get(s.status) ?? 0) + 1);
  return errors.size === 0 ? '0' : [...errors].map(([status, n]) => `${n} × ${status || 'no answer'}`).join(', ');
}
