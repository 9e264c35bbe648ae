// A by-hand profile of one project's search on a database kept by a bench (BENCH_KEEP_DB=1):
// latency p50 / p95 of the whole search with parts of retrieval off in turn, on the same queries,
// to see where the time of a search goes. Not part of `npm run bench`.
//   PROFILE_DATABASE_URL=postgres://postgres@127.0.0.1:5432/lattice_bench_xxx PROFILE_PROJECT=bench-... npx tsx bench/profile-search.ts
import { performance } from 'node:perf_hooks';
import type { SearchFeatures } from '../src/memory/index.js';
import { createLattice } from '../src/modules.js';
import { createLogger } from '../src/platform/logger.js';
import { configFor, makeTexts, markdownTable, ms, queryTemplates, summarise } from './support.js';

const url = process.env.PROFILE_DATABASE_URL;
if (!url) throw new Error('PROFILE_DATABASE_URL names the kept database');
const n = Number(process.env.PROFILE_SEARCHES ?? 200);

const variants: [string, Partial<SearchFeatures>][] = [
  ['whole', {}],
  ['no neighbours, newerFirst, time, names, relatedForms', { neighbours: false, newerFirst: false, time: false, names: false, relatedForms: false }],
  ['no newerFirst', { newerFirst: false }],
  ['vector leg alone', { lexical: false }],
  ['lexical leg alone', { vector: false }],
  // The same queries again: the first row paid for the caches the others find warm.
  ['whole, again', {}],
];

const ctx = await createLattice(configFor({ DATABASE_URL: url }), { log: createLogger('warn') });
try {
  const projectId = process.env.PROFILE_PROJECT ?? (await ctx.runtime.db.query<{ id: string }>(`SELECT project_id AS id FROM memories GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`)).rows[0]!.id;
  const queries = makeTexts(n + 30, 4242, queryTemplates);
  for (const q of queries) await ctx.apis.embeddings.embedQuery(q);
  // Warm-up: every query once, so no row pays for the caches the others find warm.
  for (const q of queries) await ctx.apis.memory.search(projectId, { query: q, limit: 10 });
  const rows: string[][] = [];
  for (const [name, features] of variants) {
    const times: number[] = [];
    for (const q of queries.slice(30)) {
      const started = performance.now();
      await ctx.apis.memory.search(projectId, { query: q, limit: 10, features });
      times.push(performance.now() - started);
    }
    const s = summarise(times);
    rows.push([name, ms(s.p50), ms(s.p95)]);
    process.stderr.write(`${name} done\n`);
  }
  console.log(markdownTable(['variant (query vector cached)', 'p50', 'p95'], rows, (i) => i > 0));
} finally {
  await ctx.close();
}
