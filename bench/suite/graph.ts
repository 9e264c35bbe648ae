// A 3-hop traversal at 100k edges through the API against a raw recursive CTE over the same edges.
// The graph is written by SQL as bench/graph.ts writes it: N = edges / 25 entities, each with 20
// current outgoing edges (fan-out 20, below the service's bound of 50) and 5 retired ones.
import { performance } from 'node:perf_hooks';
import type { TraversalEdge } from '../../src/graph/schemas.js';
import { nameKey } from '../../src/graph/names.js';
import { newId } from '../../src/platform/ids.js';
import { ms, mulberry32, progress, ProjectClient, seconds, summarise, thousands } from '../support.js';
import { addRow, latencyMeasure, type Run } from './common.js';

const FAN_OUT = 20;
const RETIRED = 5;
const PER_ENTITY = FAN_OUT + RETIRED;
const PREDICATES = ['works_at', 'member_of', 'part_of', 'knows', 'prefers'] as const;
const TYPES = ['person', 'person', 'person', 'org', 'location'] as const;
const BATCH = 10_000;
const WARMUP = 20;
/** The traversal's default answer: at most this many edges. */
const ANSWER_LIMIT = 500;
const DAY_MS = 86_400_000;

// Issue 12's goal (Postgres, 100k edges, fan-out 20).
const GOAL_TRAVERSE_P95_MS = 50;

export async function benchGraph(run: Run, totalEdges: number, calls: number): Promise<void> {
  const { ctx, app, setup } = run;
  const db = ctx.runtime.db;
  const projectId = 'suite-graph';
  await ctx.apis.tenancy.createProject(projectId, { plan: 'enterprise' });
  const { apiKey } = await ctx.apis.tenancy.createKey(projectId, ['READ_MEMORY', 'WRITE_MEMORY']);
  const client = new ProjectClient(app, projectId, apiKey);

  const n = Math.max(PER_ENTITY + 1, Math.round(totalEdges / PER_ENTITY));
  const random = mulberry32(1101);
  const now = Date.now();
  const ids = Array.from({ length: n }, () => newId('ent'));
  const types = ids.map((_, i) => TYPES[i % TYPES.length]!);
  const names = ids.map((_, i) => `${types[i]} ${String(i).padStart(6, '0')}`);
  const edge = { id: [] as string[], s: [] as string[], p: [] as string[], o: [] as string[], w: [] as number[], from: [] as string[], to: [] as (string | null)[] };
  for (let i = 0; i < n; i++) {
    const targets = new Set<number>();
    while (targets.size < PER_ENTITY) {
      const j = Math.floor(random() * n);
      if (j !== i) targets.add(j);
    }
    [...targets].forEach((j, slot) => {
      const current = slot < FAN_OUT;
      edge.id.push(newId('edge'));
      edge.s.push(ids[i]!);
      edge.o.push(ids[j]!);
      edge.p.push(slot === 0 ? 'works_at' : PREDICATES[1 + Math.floor(random() * (PREDICATES.length - 1))]!);
      edge.w.push(1 - random());
      if (current) {
        edge.from.push(new Date(now - random() * 3 * 365 * DAY_MS).toISOString());
        edge.to.push(null);
      } else {
        const from = now - 400 * DAY_MS - random() * 700 * DAY_MS;
        edge.from.push(new Date(from).toISOString());
        edge.to.push(new Date(from + 30 * DAY_MS + random() * 300 * DAY_MS).toISOString());
      }
    });
  }
  const t0 = performance.now();
  const entityFrom = new Date(now - 4 * 365 * DAY_MS).toISOString();
  for (let from = 0; from < n; from += BATCH) {
    const to = Math.min(n, from + BATCH);
    await db.query(
      `INSERT INTO graph_entities (project_id, id, type, canonical_name, valid_from, created_at, updated_at)
       SELECT $1, v.id, v.type, v.name, $5::timestamptz, $5::timestamptz, $5::timestamptz FROM unnest($2::text[], $3::text[], $4::text[]) AS v(id, type, name)`,
      [projectId, ids.slice(from, to), types.slice(from, to), names.slice(from, to), entityFrom],
    );
    await db.query(`INSERT INTO graph_entity_names (project_id, name_key, entity_id) SELECT $1, v.k, v.id FROM unnest($2::text[], $3::text[]) AS v(k, id)`, [
      projectId,
      names.slice(from, to).map(nameKey),
      ids.slice(from, to),
    ]);
  }
  for (let from = 0; from < edge.id.length; from += BATCH) {
    const to = Math.min(edge.id.length, from + BATCH);
    await db.query(
      `INSERT INTO graph_edges (project_id, id, subject_id, predicate, object_id, weight, valid_from, valid_to, created_at, retired_at)
       SELECT $1, v.id, v.s, v.p, v.o, v.w, v.f, v.t, v.f, v.t
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::float8[], $7::timestamptz[], $8::timestamptz[]) AS v(id, s, p, o, w, f, t)`,
      [projectId, edge.id.slice(from, to), edge.s.slice(from, to), edge.p.slice(from, to), edge.o.slice(from, to), edge.w.slice(from, to), edge.from.slice(from, to), edge.to.slice(from, to)],
    );
    if (to % 50_000 === 0 || to === edge.id.length) progress(`[${setup}] graph: ${thousands(to)}/${thousands(edge.id.length)} edges written`);
  }
  await db.exec('ANALYZE graph_entities, graph_entity_names, graph_edges');
  const loadMs = performance.now() - t0;

  const pick = mulberry32(203);
  const seeds = Array.from({ length: WARMUP + calls }, () => ids[Math.floor(pick() * n)]!);
  progress(`[${setup}] graph: ${calls} traversals of 3 hops through POST /admin/memory/graph/traverse, the service alone, and the recursive CTE, alternated`);

  // The reference: a plain recursive CTE over the same edges, outward, valid now, 3 hops, the first
  // 500 edges it reaches (the service's default answer), each with both entities' type and name.
  const cte = `
    WITH RECURSIVE walk AS (
      SELECT g.id, g.subject_id, g.predicate, g.object_id, g.weight, g.valid_from, g.valid_to, 1 AS hop
        FROM graph_edges g
       WHERE g.project_id = $1 AND g.subject_id = $2 AND g.valid_from <= $3::timestamptz AND (g.valid_to IS NULL OR g.valid_to > $3::timestamptz)
      UNION ALL
      SELECT g.id, g.subject_id, g.predicate, g.object_id, g.weight, g.valid_from, g.valid_to, w.hop + 1
        FROM walk w JOIN graph_edges g ON g.project_id = $1 AND g.subject_id = w.object_id
       WHERE w.hop < 3 AND g.valid_from <= $3::timestamptz AND (g.valid_to IS NULL OR g.valid_to > $3::timestamptz)
    )
    SELECT w.*, s.type AS subject_type, s.canonical_name AS subject_name, o.type AS object_type, o.canonical_name AS object_name
      FROM (SELECT * FROM walk LIMIT ${ANSWER_LIMIT}) w
      JOIN graph_entities s ON s.project_id = $1 AND s.id = w.subject_id
      LEFT JOIN graph_entities o ON o.project_id = $1 AND o.id = w.object_id`;
  const http: number[] = [];
  const service: number[] = [];
  const raw: number[] = [];
  let answered = 0;
  let rawRows = 0;
  for (const [k, entityId] of seeds.entries()) {
    let start = performance.now();
    const edges = await client.post<TraversalEdge[]>('/admin/memory/graph/traverse', { entityId, hops: 3 });
    const httpMs = performance.now() - start;
    start = performance.now();
    await ctx.apis.graph.traverse(projectId, { entityId, hops: 3 });
    const serviceMs = performance.now() - start;
    start = performance.now();
    const { rows } = await db.query(cte, [projectId, entityId, new Date().toISOString()]);
    const rawMs = performance.now() - start;
    if (k < WARMUP) continue;
    http.push(httpMs);
    service.push(serviceMs);
    raw.push(rawMs);
    answered += edges.length;
    rawRows += rows.length;
    if ((k + 1 - WARMUP) % 100 === 0) progress(`[${setup}] graph: ${k + 1 - WARMUP}/${calls}`);
  }
  const s = summarise(service);
  addRow(
    run,
    `graph traverse, 3 hops, ${thousands(edge.id.length)} edges, POST /admin/memory/graph/traverse`,
    latencyMeasure('the API (routing, auth, the service, JSON; app.inject)', summarise(http)),
    latencyMeasure(`raw recursive CTE: outward edges valid now, 3 hops, the first ${ANSWER_LIMIT} reached, both entities joined`, summarise(raw)),
    { text: `#12: p95 ≤ ${GOAL_TRAVERSE_P95_MS} ms at 100k edges, fan-out 20`, ok: (v) => v <= GOAL_TRAVERSE_P95_MS, offScale: edge.id.length < 100_000 ? `measured at ${thousands(edge.id.length)} edges` : undefined },
    [
      `${thousands(n)} entities, fan-out ${FAN_OUT} current edges (+${RETIRED} retired) each, written by SQL in ${seconds(loadMs)} (ANALYZEd)`,
      `mean edges answered: API ${(answered / calls).toFixed(0)}, CTE ${(rawRows / calls).toFixed(0)}`,
      `the service alone (ctx.apis.graph.traverse, no HTTP, no JSON): p50 ${ms(s.p50)}, p95 ${ms(s.p95)}`,
    ],
  );
}
