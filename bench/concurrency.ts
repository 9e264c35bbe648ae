// Concurrency benchmark: Lattice under many concurrent writers. `lattice serve` runs as its own
// process on loopback (bench/lattice-process.ts, as the soak runs it), and the soak's mixed workload
// (bench/workload.ts: search 40%, save 30%, emit 20%, typed ingest of 10 observations 10%) is sent as
// a closed loop, each client sending its next request when its last is answered, at each client
// count of CONCURRENCY_CLIENTS, in two layouts:
//   - one project: every client on the same project (contention on one project's rows and locks);
//   - spread: client i on project i mod CONCURRENCY_PROJECTS (the same load over many tenants).
// Every save adds a memory, and a search's cost grows with its project: so that a phase measures its
// client count rather than what the phases before it stored, each one-project phase runs on a
// project of its own, seeded like the others, and the spread layout's projects are not shared with
// it (they grow by a twentieth of a phase's saves each). The table gives the memories a phase's
// projects held at its start. A phase stops starting requests after
// CONCURRENCY_SECONDS, lets those in flight finish, and then waits for the embedding backlog it
// left (saves answer before their embedding when the encoder is busy) so that it does not run on
// into the next phase; that wait is reported, not counted in the phase.
//
// Prints one markdown table to stdout (progress on stderr): per layout and client count, the
// requests answered, throughput, p50 / p99 per operation and overall, the answers that were not 2xx
// by status, the server's CPU share over the phase and this process's, and the embedding backlog's
// wait. Then what GET /readyz answered after each phase, as it came (the database pool's figures,
// where the server reports them).
//
// The projects (enterprise plan, one key each) are made with the admin CLI (`lattice project
// create`, `lattice key create`) before the server starts: the service has no HTTP route for them,
// and on the embedded default only one process may open the data directory. Each gets the typed
// attribute the ingest writes and CONCURRENCY_SEED_MEMORIES memories for search to find.
//
//   npm run bench:concurrency                      # embedded default (PGlite, in-process queue)
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres REDIS_URL=redis://127.0.0.1:6379 npm run bench:concurrency
//   CITUS_URL=postgres://postgres@127.0.0.1:9700/postgres REDIS_URL=redis://127.0.0.1:6379 npm run bench:concurrency
//     (on a throwaway database of the cluster scripts/citus/cluster.sh starts, distributed by project)
// Settings: CONCURRENCY_CLIENTS (1,4,16,64), CONCURRENCY_SECONDS per phase (20),
// CONCURRENCY_PROJECTS (20), CONCURRENCY_SEED_MEMORIES per project (100), CONCURRENCY_NODE_ARGS for
// the server's node (--cpu-prof…); the service settings
// the soak hands to the server (the database pools' sizes, POOL_MAX_THREADS, WORKER_CONCURRENCY…;
// bench/lattice-process.ts lists them) go through here too. On Postgres a throwaway database is
// created and dropped, and the queue prefix's Redis keys deleted.
import { cpus, loadavg } from 'node:os';
import { LatticeProcess } from './lattice-process.js';
import { markdownTable, ms, positiveInt, progress, runBench, summarise } from './support.js';
import { createWorkload, errorsByStatus, OPS, prepareProject, projectAt, waitForEmbeddings, type Project, type Sample, type Workload } from './workload.js';

const CLIENT_COUNTS = (process.env.CONCURRENCY_CLIENTS ?? '1,4,16,64').split(',').map((text) => {
  const value = Number(text.trim());
  if (!Number.isInteger(value) || value < 1 || value > 1024) throw new Error('CONCURRENCY_CLIENTS must be a comma-separated list of integers from 1 to 1024');
  return value;
});
const SECONDS = (() => {
  const value = Number(process.env.CONCURRENCY_SECONDS ?? 20);
  if (!Number.isFinite(value) || value <= 0 || value > 3600) throw new Error('CONCURRENCY_SECONDS must be a number of seconds, above 0 and at most 3600');
  return value;
})();
const PROJECTS = positiveInt('CONCURRENCY_PROJECTS', 20);
/** Arguments for the server's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to see where its time goes. */
const NODE_ARGS = (process.env.CONCURRENCY_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const SEED_MEMORIES = positiveInt('CONCURRENCY_SEED_MEMORIES', 100);
/** Untimed, before the first phase: the server's code paths warmed up (JIT, caches) under load. */
const WARM_UP_SECONDS = 3;
/** The longest wait for an embedding backlog to clear; past it the next phase starts anyway. */
const BACKLOG_LIMIT_MS = 300_000;
/**
 * A bound on one client's requests per phase, beside the time: far above what one client sends
 * one request at a time (10,000 per second), so the time is what ends a phase.
 */
const MAX_REQUESTS_PER_CLIENT_SECOND = 10_000;
/** Admin commands at once on Postgres (each is a node process); the embedded data directory takes one. */
const CLI_PARALLEL_ON_POSTGRES = 4;

/** A sample and the project it was sent to. */
type ClientSample = Sample & { projectId: string };

interface Phase {
  layout: string;
  clients: number;
  samples: ClientSample[];
  wallSeconds: number;
  /** CPU time over wall time, 1 = one core. */
  serverCpu: number;
  clientCpu: number;
  backlog: { ms: number; cleared: boolean };
  readyz: string;
  /** Memories per project of the phase at its start: the seed and the saves before it. */
  storedAtStart: number;
}

/** Runs `fn` over the items, `parallel` at a time. */
async function inTurn<T>(items: readonly T[], parallel: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

/** Makes the projects and their keys with the admin CLI (the server must not be running on the embedded default). */
async function createProjects(lattice: LatticeProcess, ids: readonly string[]): Promise<Map<string, string>> {
  const keys = new Map<string, string>();
  const create = async (id: string) => {
    await lattice.cli(['project', 'create', id, '--plan', 'enterprise', '--json']);
    const key = JSON.parse(await lattice.cli(['key', 'create', '--project', id, '--permissions', 'READ_MEMORY,WRITE_MEMORY', '--name', 'bench-concurrency', '--json'])) as { apiKey: string };
    keys.set(id, key.apiKey);
    progress(`[concurrency] project ${keys.size}/${ids.length}: ${id}`);
  };
  // The first alone: it applies the migrations to the empty database, which parallel commands would race to do.
  await create(ids[0]!);
  await inTurn(ids.slice(1), lattice.postgres ? CLI_PARALLEL_ON_POSTGRES : 1, create);
  return keys;
}

/** `clients` closed-loop clients, client i on projects[i mod length], for `seconds`; then those in flight finish. */
async function closedLoop(lattice: LatticeProcess, workload: Workload, projects: readonly Project[], clients: number, seconds: number, label: string) {
  const samples: ClientSample[] = [];
  const cpuBefore = lattice.cpuSeconds();
  const selfBefore = process.cpuUsage();
  const start = performance.now();
  const end = start + seconds * 1000;
  const maxRequests = Math.ceil(seconds * MAX_REQUESTS_PER_CLIENT_SECOND);
  const ticker = setInterval(() => progress(`[concurrency] ${label}: ${((performance.now() - start) / 1000).toFixed(0)} s, ${samples.length} answered`), 5000);
  try {
    await Promise.all(Array.from({ length: clients }, async (_, i) => {
      const project = projects[i % projects.length]!;
      for (let n = 0; n < maxRequests && performance.now() < end; n++) samples.push({ ...(await workload.send(project, workload.nextOp())), projectId: project.id });
    }));
  } finally {
    clearInterval(ticker);
  }
  const wallSeconds = (performance.now() - start) / 1000;
  const self = process.cpuUsage(selfBefore);
  return {
    samples,
    wallSeconds,
    serverCpu: (lattice.cpuSeconds() - cpuBefore) / wallSeconds,
    clientCpu: (self.user + self.system) / 1e6 / wallSeconds,
  };
}

/** What /readyz answers, compactly: its JSON on one line, or the status and the start of a body that is not JSON. */
async function readiness(lattice: LatticeProcess): Promise<string> {
  try {
    const res = await fetch(`${lattice.origin}/readyz`, { signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    try {
      return `${res.status} ${JSON.stringify(JSON.parse(text))}`;
    } catch {
      return `${res.status} ${text.slice(0, 300)}`;
    }
  } catch (error) {
    return `no answer (${error instanceof Error ? error.message : String(error)})`;
  }
}

async function main(): Promise<void> {
  // Other work on the machine takes cores from the server and from the clients: the table says how much there was.
  const loadBefore = loadavg()[0]!;
  const lattice = await LatticeProcess.create('concurrency');
  try {
    const spreadIds = Array.from({ length: PROJECTS }, (_, i) => `concurrency-${String(i + 1).padStart(2, '0')}`);
    const soloIds = CLIENT_COUNTS.map((clients) => `concurrency-solo-${clients}`);
    const ids = [...spreadIds, ...soloIds];
    progress(`[concurrency] ${lattice.backend}: creating ${ids.length} projects with the admin CLI`);
    const keys = await createProjects(lattice, ids);
    progress(`[concurrency] starting lattice serve on ${lattice.backend}`);
    await lattice.start({ nodeArgs: NODE_ARGS });
    const at = (id: string) => projectAt(lattice.origin, id, keys.get(id)!);
    const spread = spreadIds.map(at);
    const solo = new Map(CLIENT_COUNTS.map((clients, i) => [clients, at(soloIds[i]!)]));
    const all = [...spread, ...solo.values()];
    const workload = createWorkload();
    progress(`[concurrency] seeding ${SEED_MEMORIES} memories in each project`);
    await Promise.all(all.map((project) => prepareProject(workload, project, SEED_MEMORIES)));
    await waitForEmbeddings(all, BACKLOG_LIMIT_MS);
    // The memories each project holds: its seed, and the saves the phases made in it.
    const stored = new Map(all.map((project) => [project.id, SEED_MEMORIES]));
    const countSaves = (samples: readonly ClientSample[]) => {
      for (const s of samples) if (s.op === 'save' && s.status === 201) stored.set(s.projectId, stored.get(s.projectId)! + 1);
    };
    progress(`[concurrency] warm-up: 4 clients over the spread projects, ${WARM_UP_SECONDS} s (not reported)`);
    const warm = await closedLoop(lattice, workload, spread, 4, WARM_UP_SECONDS, 'warm-up');
    countSaves(warm.samples);
    await waitForEmbeddings(spread, BACKLOG_LIMIT_MS);

    const phases: Phase[] = [];
    for (const clients of CLIENT_COUNTS) {
      const layouts: [string, readonly Project[]][] = [['1 project', [solo.get(clients)!]], [`${PROJECTS} projects`, spread]];
      for (const [layout, used] of layouts) {
        const label = `${layout}, ${clients} client${clients === 1 ? '' : 's'}`;
        const storedAtStart = used.reduce((sum: number, project) => sum + stored.get(project.id)!, 0) / used.length;
        progress(`[concurrency] ${label}: ${SECONDS} s`);
        const run = await closedLoop(lattice, workload, used, clients, SECONDS, label);
        lattice.assertRunning();
        countSaves(run.samples);
        const readyz = await readiness(lattice);
        const backlog = await waitForEmbeddings(used.slice(0, clients), BACKLOG_LIMIT_MS);
        phases.push({ layout, clients, ...run, backlog, readyz, storedAtStart });
        const firstErrors = new Map<number, string>();
        for (const s of run.samples) if ((s.status < 200 || s.status >= 300) && !firstErrors.has(s.status)) firstErrors.set(s.status, `${s.op}: ${s.error ?? ''}`);
        progress(
          `[concurrency] ${label}: ${run.samples.length} answered in ${run.wallSeconds.toFixed(1)} s, server CPU ${(run.serverCpu * 100).toFixed(0)}%, ` +
            `backlog cleared in ${(backlog.ms / 1000).toFixed(1)} s; /readyz ${readyz}`,
        );
        for (const [status, example] of firstErrors) progress(`[concurrency]   ${status || 'no answer'}, e.g. ${example}`);
      }
    }

    const cell = (samples: readonly Sample[]) => {
      const stats = summarise(samples.map((s) => s.ms));
      return samples.length === 0 ? '–' : `${ms(stats.p50)} / ${ms(stats.p99)}`;
    };
    const rows = [...phases]
      .sort((a, b) => Number(a.layout !== '1 project') - Number(b.layout !== '1 project') || a.clients - b.clients)
      .map((p) => {
        const answered = p.samples.filter((s) => s.status !== 0).length;
        return [
          p.layout,
          String(p.clients),
          Math.round(p.storedAtStart).toLocaleString('en-US'),
          answered.toLocaleString('en-US'),
          `${(answered / p.wallSeconds).toFixed(1)}/s`,
          ...OPS.map((op) => cell(p.samples.filter((s) => s.op === op))),
          cell(p.samples),
          errorsByStatus(p.samples),
          `${(p.serverCpu * 100).toFixed(0)}%`,
          `${(p.clientCpu * 100).toFixed(0)}%`,
          `${p.backlog.cleared ? '' : '> '}${(p.backlog.ms / 1000).toFixed(1)} s`,
        ];
      });
    const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
    console.log(
      `\nConcurrency, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${lattice.backend}, Node ${process.version}, ${cpus().length} × ${cpu}; ` +
        `load average (1 min) ${loadBefore.toFixed(1)} before the run, ${loadavg()[0]!.toFixed(1)} at its end.`,
    );
    console.log(
      `Closed loop, ${SECONDS} s per phase (then the requests in flight finish; throughput is over that whole time), the soak's mix ` +
        `(search 40%, save 30%, emit 20%, typed ingest of 10 observations 10%). "1 project": every client on one project; ` +
        `"${PROJECTS} projects": client i on project i mod ${PROJECTS}. Each project was seeded with ${SEED_MEMORIES} memories and saves add more: ` +
        `each one-project phase ran on a project of its own, the ${PROJECTS} projects were shared by their phases (memories at start: per project of the phase). ` +
        `The phases ran by client count, the two layouts in turn. Latencies are p50 / p99. Server CPU: the lattice serve process's user + system ` +
        `time (its threads, and any child processes) over the phase's wall time; 100% = one core busy throughout, this machine has ${cpus().length}. ` +
        `${lattice.postgres ? "Postgres's and Redis's own CPU is not in it" : 'The embedded database runs inside the server, so its CPU is in it'}. ` +
        `Client CPU: this bench's own process, on the same cores. Backlog: the wait after the phase until every saved memory had its embedding (not in the phase).\n`,
    );
    console.log(
      markdownTable(
        ['Layout', 'Clients', 'Memories at start', 'Answered', 'Throughput', ...OPS.map((op) => `${op} p50 / p99`), 'all p50 / p99', 'Errors', 'Server CPU', 'Client CPU', 'Backlog'],
        rows,
        (c) => c >= 1 && c !== 10,
      ),
    );
    console.log(`\nGET /readyz after each phase:\n`);
    for (const p of phases) console.log(`- ${p.layout}, ${p.clients} client${p.clients === 1 ? '' : 's'}: ${p.readyz}`);
  } finally {
    await lattice.close();
  }
}

runBench(main);
