// BM25: worked examples with hand-computed scores (pure and in SQL), the choice of lexical
// candidate terms, and the term statistics staying exact through every write (a property test
// against a recount).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anyOf, BM25, bm25Score, candidateTerms, idf, weightTerms } from '../../../src/memory/search/bm25.js';
import { collectionLexical, queryTerms, searchCandidates } from '../../../src/memory/search/store.js';
import { insertMemories } from '../../../src/memory/store.js';
import { newId } from '../../../src/platform/ids.js';
import { backend, createHarness, type Harness } from '../../helpers/harness.js';

describe('BM25, pure', () => {
  it('weighs a term by inverse document frequency (worked example)', () => {
    // ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1.6)
    expect(idf(2, 3)).toBeCloseTo(Math.log(1.6), 12);
    expect(idf(3, 3)).toBeGreaterThan(0); // never negative, even for a term in every memory
    expect(idf(1, 1000)).toBeGreaterThan(idf(10, 1000));
  });

  it('scores a worked example by hand', () => {
    // Three memories, |d| in bytes: d1 'apple banana' (12), d2 'apple apple cherry' (18), d3 'banana split dessert' (20); avgdl = 50/3.
    const corpus = { documents: 3, avgLength: 50 / 3 };
    const terms = weightTerms([{ lexeme: 'appl', df: 2 }], corpus);
    // d1: tf 1: norm = 1.2 x (0.1 + 0.9 x 12 / (50/3)) = 0.8976; score = ln(1.6) x 2.2 / 1.8976 = 0.544903
    expect(bm25Score(terms, new Map([['appl', 1]]), 12, corpus)).toBeCloseTo((Math.log(1.6) * 2.2) / (1 + 1.2 * (0.1 + (0.9 * 12) / (50 / 3))), 12);
    expect(bm25Score(terms, new Map([['appl', 1]]), 12, corpus)).toBeCloseTo(0.544903, 5);
    // d2: tf 2: norm = 1.2 x (0.1 + 0.9 x 18 / (50/3)) = 1.2864; score = ln(1.6) x 2 x 2.2 / 3.2864 = 0.629265
    expect(bm25Score(terms, new Map([['appl', 2]]), 18, corpus)).toBeCloseTo(0.629265, 5);
    expect(bm25Score(terms, new Map([['banana', 1]]), 20, corpus)).toBe(0);
  });

  it('saturates term frequency and prefers the shorter of two equal matches', () => {
    const corpus = { documents: 100, avgLength: 10 };
    const terms = weightTerms([{ lexeme: 'x', df: 5 }], corpus);
    const score = (tf: number, length: number) => bm25Score(terms, new Map([['x', tf]]), length, corpus);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 200 }), (tf, length) => {
        expect(score(tf + 1, length)).toBeGreaterThan(score(tf, length));
        expect(score(tf + 1, length) - score(tf, length)).toBeLessThan(idf(5, 100) * (BM25.k1 + 1));
        expect(score(tf, length)).toBeGreaterThanOrEqual(score(tf, length + 1));
      }),
    );
  });

  it('takes the rarest terms as candidates while their matches stay within the budget; none too common', () => {
    const terms = [
      { lexeme: 'common', df: 900 },
      { lexeme: 'rare', df: 3 },
      { lexeme: 'middling', df: 150 },
      { lexeme: 'absent', df: 0 },
    ];
    expect(candidateTerms(terms, 200)).toEqual(['rare', 'middling']);
    expect(candidateTerms(terms, 100)).toEqual(['rare']);
    expect(candidateTerms(terms, 2)).toEqual([]);
    expect(candidateTerms([{ lexeme: 'common', df: 900 }], 100)).toEqual([]);
    expect(candidateTerms([{ lexeme: 'common', df: 900 }, { lexeme: 'usual', df: 500 }], 100, true)).toEqual(['usual']);
    expect(candidateTerms([{ lexeme: 'absent', df: 0 }], 100, true)).toEqual([]);
  });

  it('quotes lexemes for tsquery so none is parsed again', () => {
    expect(anyOf(['appl', "o'neil", 'back\\slash'])).toBe("'appl' | 'o''neil' | 'back\\\\slash'");
  });
});

describe('BM25 in SQL, and the term statistics', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(() => h?.close());

  it('computes the worked example in the database as by hand', async () => {
    const { projectId } = await h.project();
    await h.apis.memory.saveMany(projectId, [{ content: 'apple banana' }, { content: 'apple apple cherry' }, { content: 'banana split dessert' }]);
    const { terms, corpus } = await queryTerms(h.db, projectId, 'apples');
    expect(terms).toEqual([{ lexeme: 'appl', df: 2 }]);
    expect(corpus.documents).toBe(3);
    expect(corpus.avgLength).toBeCloseTo(50 / 3, 12);
    const candidates = await searchCandidates(h.db, {
      projectId,
      filter: { liveOnly: true },
      lexical: { terms: weightTerms(terms, corpus), match: anyOf(candidateTerms(terms)), avgLength: corpus.avgLength },
      k: 10,
      exact: true,
    });
    const byContent = new Map(candidates.map((c) => [c.memory.content, c]));
    expect(byContent.get('apple apple cherry')).toMatchObject({ textRank: 1 });
    expect(byContent.get('apple apple cherry')!.bm25).toBeCloseTo(0.629265, 5);
    expect(byContent.get('apple banana')).toMatchObject({ textRank: 2 });
    expect(byContent.get('apple banana')!.bm25).toBeCloseTo(0.544903, 5);
    expect(byContent.has('banana split dessert')).toBe(false);
  });

  it("ranks a subject's memories exactly as BM25 with the subject's own statistics would, other subjects' words aside", async () => {
    // Words and their lexemes under Postgres's english configuration.
    const vocabulary: [string, string][] = [['apple', 'appl'], ['banana', 'banana'], ['cherry', 'cherri'], ['violin', 'violin'], ['lisbon', 'lisbon'], ['green', 'green'], ['tea', 'tea']];
    const doc = fc.array(fc.integer({ min: 0, max: vocabulary.length - 1 }), { minLength: 1, maxLength: 6 });
    await fc.assert(
      fc.asyncProperty(fc.array(doc, { minLength: 1, maxLength: 12 }), fc.array(doc, { maxLength: 12 }), doc, async (mine, others, query) => {
        const { projectId } = await h.project();
        const text = (words: number[]) => words.map((w) => vocabulary[w]![0]).join(' ');
        await h.apis.memory.saveMany(projectId, mine.map((words) => ({ content: text(words), subject: { kind: 'user', externalId: 'ana' } })));
        await h.apis.memory.saveMany(projectId, others.map((words) => ({ content: text(words), subject: { kind: 'user', externalId: 'rui' } })));
        const filter = { subjectKind: 'user', subjectExternalId: 'ana', liveOnly: true };
        const got = await collectionLexical(h.db, projectId, filter, text(query), 5);
        // The reference: the subject's live memories (replays of a text are one memory), scored in memory.
        const { rows } = await h.db.query<{ id: string; content: string }>(
          `SELECT id, content FROM memories WHERE project_id = $1 AND subject_external_id = 'ana' ORDER BY id`,
          [projectId],
        );
        const lexemeOf = new Map(vocabulary.map(([word, lexeme]) => [word, lexeme]));
        const tfs = rows.map((r) => {
          const tf = new Map<string, number>();
          for (const word of r.content.split(' ')) tf.set(lexemeOf.get(word)!, (tf.get(lexemeOf.get(word)!) ?? 0) + 1);
          return tf;
        });
        const queryLexemes = [...new Set(query.map((w) => vocabulary[w]![1]))].sort();
        const df = queryLexemes.map((lexeme) => ({ lexeme, df: tfs.filter((tf) => tf.has(lexeme)).length }));
        const corpus = { documents: rows.length, avgLength: rows.reduce((sum, r) => sum + Buffer.byteLength(r.content), 0) / rows.length };
        expect(got!.terms).toEqual(df);
        expect(got!.corpus.documents).toBe(corpus.documents);
        expect(got!.corpus.avgLength).toBeCloseTo(corpus.avgLength, 9);
        const weighted = weightTerms(df, corpus);
        const scored = rows
          .map((r, i) => ({ id: r.id, score: bm25Score(weighted, tfs[i]!, Buffer.byteLength(r.content), corpus) }))
          .filter((x) => x.score > 0);
        // Ids in the answer's order must have scores that never rise, and be the best five.
        const scoreOf = new Map(scored.map((x) => [x.id, x.score]));
        const ranked = got!.ids.map((id) => scoreOf.get(id)!);
        expect(got!.ids).toHaveLength(Math.min(5, scored.length));
        for (let i = 1; i < ranked.length; i++) expect(ranked[i]!).toBeLessThanOrEqual(ranked[i - 1]! + 1e-9);
        const fifth = [...scored].sort((a, b) => b.score - a.score)[got!.ids.length - 1]?.score ?? 0;
        for (const score of ranked) expect(score).toBeGreaterThanOrEqual(fifth - 1e-9);
        // Past the cap, it declines.
        expect(await collectionLexical(h.db, projectId, filter, text(query), 5, { cap: rows.length - 1 })).toBeUndefined();
      }),
      { numRuns: 20 },
    );
  });

  it("adds to a turn's score the words of the turns beside it in its session (worked example), and nothing across sessions", async () => {
    const { projectId } = await h.project();
    const subject = { kind: 'conversation', externalId: 'c1' };
    const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 9, minute));
    const saved = await h.apis.memory.saveMany(projectId, [
      { content: 'user: do you still play the violin', subject, sessionKey: 's1', validFrom: at(0) },
      { content: 'assistant: yes, every saturday morning', subject, sessionKey: 's1', validFrom: at(1) },
      { content: 'user: what about the cello lessons', subject, sessionKey: 's1', validFrom: at(2) },
      { content: 'assistant: the weather is mild today', subject, sessionKey: 's2', validFrom: at(3) },
    ]);
    const [question, answer, after, otherSession] = saved.map((r) => r.memory.id);
    const filter = { subjectKind: 'conversation', subjectExternalId: 'c1', liveOnly: true };
    const plain = (await collectionLexical(h.db, projectId, filter, 'violin', 10))!;
    expect(plain.ids).toEqual([question]);
    const own = plain.scores.get(question!)!.own;
    expect(own).toBeGreaterThan(0);
    const withContext = (await collectionLexical(h.db, projectId, filter, 'violin', 10, { neighbours: true }))!;
    // The answer after the question gets 0.3 of its BM25; the turn after the answer gets nothing
    // (the answer holds no query word); the first turn of the next session gets nothing either.
    expect(withContext.ids).toEqual([question, answer]);
    expect(withContext.scores.get(question!)).toEqual({ own, context: 0 });
    expect(withContext.scores.get(answer!)!.own).toBe(0);
    expect(withContext.scores.get(answer!)!.context).toBeCloseTo(0.3 * own, 12);
    expect(withContext.scores.has(after!)).toBe(false);
    expect(withContext.scores.has(otherSession!)).toBe(false);
    // A memory without a session has no neighbours.
    const loose = (await h.project()).projectId;
    await h.apis.memory.saveMany(loose, [
      { content: 'user: do you still play the violin', subject, validFrom: at(0) },
      { content: 'assistant: yes, every saturday morning', subject, validFrom: at(1) },
    ]);
    expect((await collectionLexical(h.db, loose, filter, 'violin', 10, { neighbours: true }))!.ids).toHaveLength(1);
  });

  it('keeps df and the corpus exact through inserts, edits, supersedes, deletes and a project delete', async () => {
    const words = ['apple', 'banana', 'cherry', 'lives', 'living', 'Porto', 'Lisbon', 'works', 'remotely', 'teal', 'colour', 'order'];
    const text = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 6 }).map((w) => w.join(' '));
    type Op =
      | { kind: 'insert'; texts: string[] }
      | { kind: 'edit'; at: number; text: string }
      | { kind: 'supersede'; at: number }
      | { kind: 'delete'; at: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('insert' as const), texts: fc.array(text, { minLength: 1, maxLength: 5 }) }),
      fc.record({ kind: fc.constant('edit' as const), at: fc.nat(), text }),
      fc.record({ kind: fc.constant('supersede' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 8 }), async (ops) => {
        const { projectId } = await h.project();
        const ids: string[] = [];
        const pick = (at: number) => ids[at % ids.length];
        for (const o of ops) {
          if (o.kind === 'insert') {
            const saved = await h.apis.memory.saveMany(projectId, o.texts.map((content) => ({ content })));
            for (const r of saved) if (r.created) ids.push(r.memory.id);
          } else if (ids.length > 0) {
            const id = pick(o.at)!;
            if (o.kind === 'edit') await h.call('PATCH', projectId, `/admin/memory/${id}`, { body: { content: o.text } });
            else if (o.kind === 'supersede' && ids.length > 1) await h.apis.memory.supersede(projectId, [id], ids.find((x) => x !== id)!);
            else if (o.kind === 'delete') {
              await h.call('DELETE', projectId, `/admin/memory/${id}`);
              ids.splice(ids.indexOf(id), 1);
            }
          }
          expect(await statistics(h, projectId)).toEqual(await recount(h, projectId));
        }
        await h.db.query('DELETE FROM projects WHERE id = $1', [projectId]);
        expect(await statistics(h, projectId)).toEqual({ terms: [], corpus: [] });
      }),
      { numRuns: 15 },
    );
  });
});

// Per slot (migration 0018): each slot's counts must be exact on their own, which also means no
// row is left at zero or below.
/** A memory id whose counts go to `slot` (migration 0018's memory_stat_slot). */
async function idInSlot(h: Harness, slot: number): Promise<string> {
  for (;;) {
    const id = newId('mem');
    const { rows } = await h.db.query<{ slot: number }>('SELECT memory_stat_slot($1)::int AS slot', [id]);
    if (rows[0]!.slot === slot) return id;
  }
}

describe.runIf(backend === 'pg')('the word statistics have no row every save of a project updates (Postgres)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ consumers: false });
  });
  afterAll(() => h?.close());

  it('lets a save commit while another save of the project, in another slot and with no word in common, holds its transaction open', async () => {
    const { projectId } = await h.project();
    const [first, second] = [await idInSlot(h, 3), await idInSlot(h, 11)];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    const holder = h.db.transaction(async (tx) => {
      await insertMemories(tx, [{ id: first, projectId, content: 'apples grow in the orchard' }]);
      wrote();
      await held;
    });
    await written;
    try {
      // With one corpus row per project this insert would wait for the holder's commit: the lock
      // timeout makes that wait an error instead of a hang.
      await h.db.transaction(async (tx) => {
        await tx.query(`SET LOCAL lock_timeout = '2s'`);
        await insertMemories(tx, [{ id: second, projectId, content: 'violin lessons on saturday' }]);
      });
    } finally {
      release();
      await holder;
    }
    const { terms, corpus } = await queryTerms(h.db, projectId, 'apples violin');
    expect(terms).toEqual([{ lexeme: 'appl', df: 1 }, { lexeme: 'violin', df: 1 }]);
    expect(corpus.documents).toBe(2);
    expect(await statistics(h, projectId)).toEqual(await recount(h, projectId));
  }, 30_000);
});

async function statistics(h: Harness, projectId: string) {
  const terms = await h.db.query<{ lexeme: string; slot: number; df: number }>(
    'SELECT lexeme, slot::int, df FROM memory_terms WHERE project_id = $1 ORDER BY lexeme, slot',
    [projectId],
  );
  const corpus = await h.db.query<{ slot: number; documents: string; bytes: string }>(
    'SELECT slot::int, documents::text, bytes::text FROM memory_corpus WHERE project_id = $1 ORDER BY slot',
    [projectId],
  );
  return { terms: terms.rows, corpus: corpus.rows };
}

async function recount(h: Harness, projectId: string) {
  const terms = await h.db.query<{ lexeme: string; slot: number; df: number }>(
    `SELECT l AS lexeme, memory_stat_slot(m.id)::int AS slot, count(*)::int AS df FROM memories m, unnest(tsvector_to_array(m.fts)) l
      WHERE m.project_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
    [projectId],
  );
  const corpus = await h.db.query<{ slot: number; documents: string; bytes: string }>(
    `SELECT memory_stat_slot(id)::int AS slot, count(*)::text AS documents, sum(octet_length(content))::text AS bytes
       FROM memories WHERE project_id = $1 GROUP BY 1 ORDER BY 1`,
    [projectId],
  );
  return { terms: terms.rows, corpus: corpus.rows };
}
