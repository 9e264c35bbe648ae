// Entity-and-relation extraction benchmark. Scores extractGraph (src/graph/extract.ts) against the
// hand-labelled memories in test/graph/fixtures/extraction-corpus.json and prints markdown to stdout:
//   1. entities: precision, recall and F1 matching by name (trimmed, case-insensitive), and F1 when the
//      type must match too; relations: precision, recall and F1 (subject, predicate and object all
//      match, case-insensitively). Counts are summed over the corpus (micro-averaged); each distinct
//      name, name and type, or relation counts once per item.
//   2. recall per gold entity type, by name and by name and type.
//   3. up to 15 misses and 15 false positives of extractGraph (entities by name and type, so a right
//      name with the wrong type shows in both lists, marked).
// Every number is also given for a BASELINE computed in the same run: each maximal run of capitalised
// words, the first word of a sentence not counting as capitalised, is a person; no relations.
// A precision with nothing predicted counts as 0 and prints as "–".
//
// Run: npx tsx bench/graph-extraction.ts
// A test can import scoreExtraction (and baselineExtract) instead; main runs only when executed directly.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { extractGraph } from '../src/graph/extract.js';

export const ENTITY_TYPES = ['person', 'org', 'location', 'product', 'date'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

export interface Extraction {
  entities: readonly { name: string; type: string }[];
  relations: readonly { subject: string; predicate: string; object: string }[];
}
export type Extractor = (text: string) => Extraction;

export interface CorpusItem {
  text: string;
  entities: { name: string; type: EntityType }[];
  relations: { subject: string; predicate: string; object: string }[];
}

export interface Prf {
  precision: number;
  recall: number;
  f1: number;
  tp: number;
  fp: number;
  fn: number;
}

export interface ExtractionScore {
  items: number;
  /** Matched by name only. */
  entities: Prf;
  /** Matched by name and type. */
  typedEntities: Prf;
  recallByType: Record<EntityType, { gold: number; recall: number; typedRecall: number }>;
  relations: Prf;
  /** Gold entities (name and type) and relations the extractor did not produce, in corpus order. */
  misses: string[];
  /** Produced entities (name and type) and relations that are not in the gold labels, in corpus order. */
  falsePositives: string[];
}

export function loadCorpus(): CorpusItem[] {
  const url = new URL('../test/graph/fixtures/extraction-corpus.json', import.meta.url);
  const corpus: unknown = JSON.parse(readFileSync(url, 'utf8'));
  if (!Array.isArray(corpus)) throw new Error(`${url.pathname} is not a JSON array`);
  return corpus as CorpusItem[];
}

const norm = (s: string): string => s.trim().replace(/\s+/g, ' ').toLowerCase();
const relationKey = (r: { subject: string; predicate: string; object: string }): string =>
  [r.subject, r.predicate, r.object].map(norm).join('\u0000');
const showRelation = (r: { subject: string; predicate: string; object: string }): string =>
  `${r.subject} ${r.predicate} ${r.object}`;

function prf(tp: number, fp: number, fn: number): Prf {
  const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1, tp, fp, fn };
}

/** Runs `extract` on every corpus text and compares its output with the labels. */
export function scoreExtraction(extract: Extractor, corpus: readonly CorpusItem[] = loadCorpus()): ExtractionScore {
  const names = { tp: 0, fp: 0, fn: 0 };
  const typed = { tp: 0, fp: 0, fn: 0 };
  const rels = { tp: 0, fp: 0, fn: 0 };
  const byType = Object.fromEntries(ENTITY_TYPES.map((t) => [t, { gold: 0, hit: 0, typedHit: 0 }])) as Record<
    EntityType,
    { gold: number; hit: number; typedHit: number }
  >;
  const misses: string[] = [];
  const falsePositives: string[] = [];

  corpus.forEach((item, index) => {
    let out: Extraction;
    try {
      out = extract(item.text);
    } catch (error) {
      throw new Error(`extractor failed on item #${index}: ${item.text}`, { cause: error });
    }
    const where = `#${index} "${item.text}"`;

    // name -> types, for gold and predicted; each distinct name (and name+type) counts once.
    const typesOf = (entities: Extraction['entities']): Map<string, Set<string>> => {
      const map = new Map<string, Set<string>>();
      for (const e of entities) {
        const key = norm(e.name);
        if (key === '') continue;
        map.set(key, (map.get(key) ?? new Set()).add(norm(e.type)));
      }
      return map;
    };
    const gold = typesOf(item.entities);
    const pred = typesOf(out.entities);
    const display = new Map([...out.entities, ...item.entities].map((e) => [norm(e.name), e.name.trim()]));

    for (const [name, types] of gold) {
      const predTypes = pred.get(name);
      if (predTypes) names.tp++;
      else names.fn++;
      for (const type of types) {
        const bucket = byType[type as EntityType];
        if (bucket) {
          bucket.gold++;
          if (predTypes) bucket.hit++;
          if (predTypes?.has(type)) bucket.typedHit++;
        }
        if (predTypes?.has(type)) typed.tp++;
        else {
          typed.fn++;
          const note = predTypes ? ` (found as ${[...predTypes].join('/')})` : '';
          misses.push(`${where}: entity ${type} "${display.get(name)}"${note}`);
        }
      }
    }
    for (const [name, types] of pred) {
      const goldTypes = gold.get(name);
      if (!goldTypes) names.fp++;
      for (const type of types) {
        if (goldTypes?.has(type)) continue;
        typed.fp++;
        const note = goldTypes ? ` (labelled ${[...goldTypes].join('/')})` : '';
        falsePositives.push(`${where}: entity ${type} "${display.get(name)}"${note}`);
      }
    }

    const goldRels = new Map(item.relations.map((r) => [relationKey(r), r]));
    const predRels = new Map(out.relations.map((r) => [relationKey(r), r]));
    for (const [key, r] of goldRels) {
      if (predRels.has(key)) rels.tp++;
      else {
        rels.fn++;
        misses.push(`${where}: relation ${showRelation(r)}`);
      }
    }
    for (const [key, r] of predRels) {
      if (goldRels.has(key)) continue;
      rels.fp++;
      falsePositives.push(`${where}: relation ${showRelation(r)}`);
    }
  });

  const recallByType = Object.fromEntries(
    ENTITY_TYPES.map((t) => {
      const { gold, hit, typedHit } = byType[t];
      return [t, { gold, recall: gold === 0 ? 0 : hit / gold, typedRecall: gold === 0 ? 0 : typedHit / gold }];
    }),
  ) as ExtractionScore['recallByType'];

  return {
    items: corpus.length,
    entities: prf(names.tp, names.fp, names.fn),
    typedEntities: prf(typed.tp, typed.fp, typed.fn),
    recallByType,
    relations: prf(rels.tp, rels.fp, rels.fn),
    misses,
    falsePositives,
  };
}

/**
 * The baseline: split on whitespace, strip punctuation around each word (and a trailing 's); every
 * maximal run of words starting with an upper-case letter is a person. The first word of a sentence
 * (the text's first word, or one after a word ending in . ! or ?) does not count as capitalised, and a
 * word followed by punctuation (or ending in 's) ends its run. No relations.
 */
export function baselineExtract(text: string): Extraction {
  const entities: { name: string; type: EntityType }[] = [];
  let run: string[] = [];
  const flush = () => {
    if (run.length > 0) entities.push({ name: run.join(' '), type: 'person' });
    run = [];
  };
  let sentenceStart = true;
  for (const token of text.split(/\s+/).filter(Boolean)) {
    const word = token.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    const bare = word.replace(/['’]s$/u, '');
    if (/^\p{Lu}/u.test(bare) && !sentenceStart) run.push(bare);
    else flush();
    if (/[^\p{L}\p{N}]$/u.test(token) || bare !== word) flush();
    sentenceStart = /[.!?]["'”’)\]]*$/u.test(token);
  }
  flush();
  return { entities, relations: [] };
}

// ---------------------------------------------------------------------------------------------
// Report

const num = (x: number): string => x.toFixed(3);
const precisionCell = (p: Prf): string => (p.tp + p.fp === 0 ? '–' : num(p.precision));

function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map((_, i) => (i === 0 ? '---' : '--:')).join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

function report(corpus: readonly CorpusItem[], ours: ExtractionScore, base: ExtractionScore): string {
  const goldEntities = corpus.reduce((n, item) => n + item.entities.length, 0);
  const goldRelations = corpus.reduce((n, item) => n + item.relations.length, 0);
  const both = (f: (s: ExtractionScore) => string): [string, string] => [f(ours), f(base)];
  const summary = markdownTable(
    ['metric', 'extractGraph', 'baseline'],
    [
      ['entity precision (name)', ...both((s) => precisionCell(s.entities))],
      ['entity recall (name)', ...both((s) => num(s.entities.recall))],
      ['entity F1 (name)', ...both((s) => num(s.entities.f1))],
      ['entity F1 (name + type)', ...both((s) => num(s.typedEntities.f1))],
      ['relation precision', ...both((s) => precisionCell(s.relations))],
      ['relation recall', ...both((s) => num(s.relations.recall))],
      ['relation F1', ...both((s) => num(s.relations.f1))],
    ],
  );
  const perType = markdownTable(
    ['type', 'gold', 'extractGraph recall (name)', 'extractGraph recall (name + type)', 'baseline recall (name)', 'baseline recall (name + type)'],
    ENTITY_TYPES.map((t) => [
      t,
      String(ours.recallByType[t].gold),
      num(ours.recallByType[t].recall),
      num(ours.recallByType[t].typedRecall),
      num(base.recallByType[t].recall),
      num(base.recallByType[t].typedRecall),
    ]),
  );
  const list = (title: string, lines: readonly string[]): string =>
    `### ${title} (${lines.length > 15 ? `first 40 of ${lines.length}` : lines.length})\n\n` +
    (lines.length === 0 ? '(none)' : lines.slice(0, 40).map((l) => `- ${l}`).join('\n'));
  return [
    `## Graph extraction: ${corpus.length} labelled memories, ${goldEntities} entities, ${goldRelations} relations`,
    summary,
    '### Recall by entity type',
    perType,
    list('extractGraph misses', ours.misses),
    list('extractGraph false positives', ours.falsePositives),
  ].join('\n\n');
}

function main(): void {
  const corpus = loadCorpus();
  const ours = scoreExtraction(extractGraph, corpus);
  const base = scoreExtraction(baselineExtract, corpus);
  process.stdout.write(`${report(corpus, ours, base)}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();
