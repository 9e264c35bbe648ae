// Data-subject rights end to end: a subject written through every module, exported, erased (dry run
// first), and the whole schema read from the catalog afterwards for any row that still names it.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PNG } from '../media/fixtures.js';
import { appendAllTypedEvents, createHarness, foldAllTyped, uniqueName, type Harness } from '../helpers/harness.js';

const DAY = 86_400_000;
type Subject = { kind: string; externalId: string };
type Project = { projectId: string; apiKey: string };

/** Every table of the schema, from the catalog: a table added later is covered without editing this. */
async function tables(h: Harness): Promise<string[]> {
  const { rows } = await h.db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  return rows.map((r) => r.table_name);
}

/** Rows of each table whose text (every column) holds `needle`, by table, the empty ones left out. */
async function rowsNaming(h: Harness, needle: string): Promise<Record<string, number>> {
  const found: Record<string, number> = {};
  for (const table of await tables(h)) {
    const { rows } = await h.db.query<{ n: string }>(`SELECT count(*) AS n FROM "${table}" t WHERE strpos(t::text, $1) > 0`, [needle]);
    if (Number(rows[0]!.n) > 0) found[table] = Number(rows[0]!.n);
  }
  return found;
}

/** Row counts of every table (a dry run must leave each as it was). */
async function tableCounts(h: Harness): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of await tables(h)) {
    const { rows } = await h.db.query<{ n: string }>(`SELECT count(*) AS n FROM "${table}"`);
    counts[table] = Number(rows[0]!.n);
  }
  return counts;
}

describe('compliance: export, hard delete, audit', () => {
  let h: Harness;
  let a: Project;
  let other: Project;
  let free: Project;
  const alice: Subject = { kind: 'customer', externalId: uniqueName('alice-x') };
  const bob: Subject = { kind: 'customer', externalId: uniqueName('bob-y') };
  // Written per subject, to check the export against.
  const written = new Map<string, { memoryIds: string[]; observations: number; events: number; decisions: number; outcomes: number }>();

  async function ok(res: { statusCode: number; body: string }, expected = [200, 201, 202]) {
    expect(expected, res.body).toContain(res.statusCode);
    return JSON.parse(res.body);
  }

  /** One subject through every module: memories, activity and patterns, typed data, events and a fire, a decision and outcome, a prediction, features, graph, a file. */
  async function seed(p: Project, subject: Subject, name: string) {
    const record = { memoryIds: [] as string[], observations: 0, events: 0, decisions: 0, outcomes: 0 };
    const remember = async (body: Record<string, unknown>) => {
      const m = await ok(await h.call('POST', p.projectId, '/admin/memory', { body: { subject, ...body } }));
      record.memoryIds.push(m.id);
      return m;
    };
    await remember({ content: `${name} prefers oat milk in her flat white`, type: 'preference' });
    const fact = await remember({ content: `${name} works at Lumen Robotics in Lisbon`, type: 'fact' });
    const now = Date.now();
    for (let w = 8; w >= 1; w--) {
      await remember({ content: `gym visit ${w}`, type: 'event', validFrom: new Date(now - w * 7 * DAY).toISOString(), metadata: { eventType: 'gym' } });
    }
    await ok(await h.call('POST', p.projectId, '/lattice/patterns/extract', { body: { subject } }));

    await h.call('POST', p.projectId, '/memory-typed/attributes', { body: { attributeKey: 'weight_kg', dataType: 'numeric' } });
    const rows = [70, 71, 72].map((v, i) => ({ attributeKey: 'weight_kg', subjectKind: subject.kind, subjectExternalId: subject.externalId, valueNumeric: v, observedAt: new Date(now - (3 - i) * DAY).toISOString() }));
    const ingest = await ok(await h.call('POST', p.projectId, '/memory-typed/observations', { body: { observations: rows } }));
    record.observations += ingest.accepted;
    record.events += ingest.accepted; // each numeric observation is appended as a typed.observation event
    await appendAllTypedEvents(h);

    const emitted = await ok(await h.call('POST', p.projectId, '/lattice/events/emit', { body: { eventType: 'churn.risk', subject, payload: { score: 0.8 } } }));
    expect(emitted.emitted).toBe(true);
    record.events += 1;

    const predicted = await ok(await h.call('POST', p.projectId, '/memory-intelligence/predict', { body: { subject, horizonDays: 14, target: { kind: 'event_occurrence', eventType: 'gym' } } }));
    const predictionId = predicted.targetPrediction.predictionId;
    const decision = await ok(
      await h.call('POST', p.projectId, '/lattice/decisions', { body: { subject, actionType: 'offer', informedBy: [{ memoryId: predictionId, refType: 'prediction' }] } }),
    );
    record.decisions += 1;
    await ok(await h.call('POST', p.projectId, '/lattice/outcomes', { body: { decisionId: decision.decisionId, result: 'success' } }));
    record.outcomes += 1;

    await h.apis.discovery.refresh(p.projectId, [subject]);

    const entity = await ok(await h.call('POST', p.projectId, '/admin/memory/entities', { body: { type: 'person', canonicalName: name, subject } }));
    const employer = await ok(await h.call('POST', p.projectId, '/admin/memory/entities', { body: { type: 'org', canonicalName: `${name} Studio` } }));
    await ok(await h.call('POST', p.projectId, '/admin/memory/edges', { body: { subjectId: entity.id, predicate: 'owns', objectId: employer.id, sourceMemoryId: fact.id } }));

    // Bytes of its own (the same bytes are one blob, kept while any memory refers to them: checked below).
    const file = await ok(await h.call('POST', p.projectId, '/memory/attachments', { body: { subject, mimeType: 'image/png', dataBase64: Buffer.concat([PNG, Buffer.from(`${p.projectId}/${name}`)]).toString('base64'), content: `${name}'s loyalty card photo` } }));
    record.memoryIds.push(file.id ?? file.memory?.id);
    written.set(`${p.projectId}/${subject.externalId}`, record);
  }

  beforeAll(async () => {
    h = await createHarness({ env: { BEHAVIOR_MINING_DEBOUNCE_MS: '0' } });
    a = await h.project();
    other = await h.project();
    free = await h.project({ plan: 'free' });
    // An alert rule that fires on the subject's event and writes a memory back about it.
    await h.call('POST', a.projectId, '/memory-alerts', {
      body: { name: 'churn', trigger: { kind: 'engine-event', eventTypes: ['churn.risk'] }, notify: [{ kind: 'memory', writeAs: { content: 'Churn risk for {{subject.externalId}}', scope: 'user' } }] },
    });
    await seed(a, alice, 'Alice Marlow');
    await seed(a, bob, 'Bob Quist');
    // The rule's memory write-backs follow the emits (a job makes them): every one lands before a test reads.
    await vi.waitFor(
      async () => expect((await h.db.query('SELECT 1 FROM alert_fires WHERE project_id = $1 AND delivery_pending', [a.projectId])).rows).toHaveLength(0),
      { timeout: 60_000, interval: 50 },
    );
    // The same subject id in another project: its rows are that project's, never touched.
    await seed(other, alice, 'Alice Marlow');
    // The writes queued their subjects for mining (debounce 0): let that settle, or a dry run and
    // the delete after it could see the queue before and after the miner took its row (seen in CI).
    await vi.waitFor(
      async () => expect((await h.db.query('SELECT 1 FROM behavior_mining_queue WHERE project_id = ANY($1::text[])', [[a.projectId, other.projectId]])).rows).toHaveLength(0),
      { timeout: 60_000, interval: 100 },
    );
    // The typed.fold job (every 2 s) folds the ingested points: fold them now, or a dry run's
    // before-and-after table counts could straddle a fold (seen in CI: typed_unfolded 1 then 0).
    await foldAllTyped(h);
  }, 120_000);
  afterAll(() => h?.close());

  const exportOf = async (p: Project, subject: Subject) => {
    const res = await h.call('POST', p.projectId, '/memory-compliance/export', { body: { subject } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toContain('application/json');
    return res.json();
  };

  it('exports every kind of row that names the subject, with counts that match the rows and what was written', async () => {
    const bundle = await exportOf(a, alice);
    const mine = written.get(`${a.projectId}/${alice.externalId}`)!;
    expect(bundle.subject).toEqual(alice);
    expect(bundle.export.subject).toEqual(alice);
    for (const [kind, rows] of Object.entries(bundle.export)) {
      if (!Array.isArray(rows)) continue;
      const camel = kind.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
      expect(bundle.counts[camel], kind).toBe(rows.length);
    }
    const memoryIds = bundle.export.memories.map((m: { id: string }) => m.id);
    for (const id of mine.memoryIds) expect(memoryIds).toContain(id);
    // The fire's memory write-back is about the subject too.
    expect(bundle.export.memories.some((m: { content: string }) => m.content === `Churn risk for ${alice.externalId}`)).toBe(true);
    expect(bundle.counts.patterns).toBeGreaterThan(0);
    expect(bundle.export.patterns.every((p: { type: string; subject_external_id: string }) => p.type === 'behavior_pattern' && p.subject_external_id === alice.externalId)).toBe(true);
    expect(bundle.counts.observations).toBe(mine.observations);
    expect(bundle.counts.accumulators).toBe(1);
    // The engine's own events about her count too (a pattern emerging, a segment change).
    expect(bundle.counts.events).toBeGreaterThanOrEqual(mine.events);
    expect(bundle.export.events.map((e: { event_type: string }) => e.event_type)).toEqual(expect.arrayContaining(['churn.risk', 'typed.observation']));
    expect(bundle.counts.alertFires).toBe(1);
    expect(bundle.counts.decisions).toBe(mine.decisions);
    expect(bundle.counts.outcomes).toBe(mine.outcomes);
    expect(bundle.counts.predictions).toBe(1);
    expect(bundle.counts.refEvidence).toBe(1);
    expect(bundle.counts.discoveryFeatures).toBe(1);
    expect(bundle.counts.graphEdges).toBe(1);
    expect(bundle.export.graph_entities.map((e: { canonical_name: string }) => e.canonical_name).sort()).toEqual(['Alice Marlow', 'Alice Marlow Studio']);
    expect(bundle.counts.blobs).toBe(1);
    expect(bundle.export.blobs[0].blob_uri).toMatch(/^blob:\/\/local\//);
    // Nothing of Bob's.
    expect(JSON.stringify(bundle)).not.toContain(bob.externalId);
    expect(typeof bundle.generatedAt).toBe('string');
    expect(bundle.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('exports an unknown subject as empty arrays and zero counts', async () => {
    const bundle = await exportOf(a, { kind: 'customer', externalId: 'nobody-at-all' });
    expect(Object.values(bundle.counts).every((n) => n === 0)).toBe(true);
    expect(bundle.export.memories).toEqual([]);
  });

  it('a dry run answers the counts of the real delete and changes no row of any table', async () => {
    const before = await tableCounts(h);
    const res = await h.call('POST', a.projectId, '/memory-compliance/hard-delete', { body: { subject: alice, reason: 'erasure request #1', dryRun: true } });
    expect(res.statusCode, res.body).toBe(200);
    const dry = res.json();
    expect(dry).toMatchObject({ subject: alice, dryRun: true, auditEventId: null });
    expect(dry.memoriesDeleted).toBeGreaterThan(10);
    expect(await tableCounts(h)).toEqual(before);
    const bundle = await exportOf(a, alice);
    expect(dry.patternsDeleted).toBe(bundle.counts.patterns);
    expect(dry.eventsDeleted).toBe(bundle.counts.events);
  });

  it('refuses a hard delete without a reason, or with a read-only key, and changes nothing', async () => {
    const reader = await h.key(a.projectId, ['READ_MEMORY']);
    const before = await tableCounts(h);
    const missing = await h.call('POST', a.projectId, '/memory-compliance/hard-delete', { body: { subject: alice } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().code).toBe('VALIDATION_ERROR');
    const empty = await h.call('POST', a.projectId, '/memory-compliance/hard-delete', { body: { subject: alice, reason: '' } });
    expect(empty.statusCode).toBe(400);
    const refused = await h.call('POST', a.projectId, '/memory-compliance/hard-delete', { apiKey: reader, body: { subject: alice, reason: 'x' } });
    expect(refused.statusCode).toBe(403);
    expect(await tableCounts(h)).toEqual(before);
  });

  it('hard delete leaves no row of any table naming the subject; the other subject and the other project keep theirs', async () => {
    const dry = (await h.call('POST', a.projectId, '/memory-compliance/hard-delete', { body: { subject: alice, reason: 'erasure request #1', dryRun: true } })).json();
    const bobBefore = await exportOf(a, bob);
    const elsewhere = await exportOf(other, alice);
    const aliceBlob: string = (await exportOf(a, alice)).export.blobs[0].blob_uri;
    const res = await h.call('POST', a.projectId, '/memory-compliance/hard-delete', { body: { subject: alice, reason: 'erasure request #1' } });
    expect(res.statusCode, res.body).toBe(200);
    const report = res.json();
    expect(report.auditEventId).toMatch(/^aud_/);
    expect({ ...report, auditEventId: null, dryRun: true, generatedAt: 0, durationMs: 0 }).toEqual({ ...dry, generatedAt: 0, durationMs: 0 });
    expect(report).toMatchObject({ memoriesDeleted: dry.memoriesDeleted, blobsDeleted: 1, graphEntitiesDeleted: 2, graphEdgesDeleted: 1, accumulatorsDeleted: 1 });

    // The catalog: every table, every column, of this project; the other project still has its own.
    const left = await rowsNaming(h, alice.externalId);
    const { rows } = await h.db.query<{ n: string }>(`SELECT count(*) AS n FROM memories WHERE project_id = $1 AND subject_external_id = $2`, [other.projectId, alice.externalId]);
    expect(Number(rows[0]!.n)).toBeGreaterThan(0);
    const inThisProject: Record<string, number> = {};
    for (const table of Object.keys(left)) {
      const hasProject = (await h.db.query(`SELECT 1 FROM information_schema.columns WHERE table_name = $1 AND column_name = 'project_id'`, [table])).rows.length > 0;
      const q = hasProject
        ? await h.db.query<{ n: string }>(`SELECT count(*) AS n FROM "${table}" t WHERE t.project_id = $2 AND strpos(t::text, $1) > 0`, [alice.externalId, a.projectId])
        : await h.db.query<{ n: string }>(`SELECT count(*) AS n FROM "${table}" t WHERE strpos(t::text, $1) > 0`, [alice.externalId]);
      if (Number(q.rows[0]!.n) > 0) inThisProject[table] = Number(q.rows[0]!.n);
    }
    expect(inThisProject).toEqual({});
    // Her name went with her: the entities that stood for her and existed only for her.
    const names = await h.db.query(`SELECT 1 FROM graph_entities WHERE project_id = $1 AND canonical_name LIKE 'Alice Marlow%'`, [a.projectId]);
    expect(names.rows).toEqual([]);

    // Her file's bytes are gone from the store; Bob's stay.
    const { existsSync } = await import('node:fs');
    const pathOf = (uri: string) => {
      const sha = uri.split('/').pop()!;
      return `${h.config.blobDir!}/${encodeURIComponent(a.projectId)}/${sha.slice(0, 2)}/${sha}`;
    };
    expect(existsSync(pathOf(aliceBlob))).toBe(false);
    expect(existsSync(pathOf(bobBefore.export.blobs[0].blob_uri))).toBe(true);

    expect(await exportOf(a, bob)).toMatchObject({ counts: bobBefore.counts });
    expect((await exportOf(other, alice)).counts).toEqual(elsewhere.counts);
    // A second delete finds nothing and still records itself.
    const again = (await h.call('POST', a.projectId, '/memory-compliance/hard-delete', { body: { subject: alice, reason: 'repeat' } })).json();
    expect(again.memoriesDeleted).toBe(0);
    expect(again.auditEventId).toMatch(/^aud_/);
  });

  it('records every read of subject data, and the tombstone, in the audit log; a subject filter narrows it to one person', async () => {
    const p = await h.project();
    const carol: Subject = { kind: 'customer', externalId: uniqueName('carol') };
    await ok(await h.call('POST', p.projectId, '/admin/memory', { body: { subject: carol, content: 'Carol likes green tea', type: 'preference' } }));
    const search = await ok(await h.call('POST', p.projectId, '/memory/search', { body: { query: 'what tea', subject: carol } }));
    expect(search.length ?? search.results?.length).toBeGreaterThan(0);
    await ok(await h.call('POST', p.projectId, '/lattice/context', { body: { subject: carol } }));
    await exportOf(p, carol);
    await h.apis.compliance.auditSettled();
    const log = await ok(await h.call('GET', p.projectId, `/memory-compliance/audit?subjectKind=customer&subjectExternalId=${carol.externalId}`));
    const types = log.map((r: { eventType: string }) => r.eventType);
    expect(types).toEqual(expect.arrayContaining(['write.memory', 'read.search', 'read.context', 'read.export']));
    const searchRow = log.find((r: { eventType: string }) => r.eventType === 'read.search');
    const key = (await h.apis.tenancy.listKeys(p.projectId))[0]!;
    expect(searchRow).toMatchObject({ actor: key.id, query: 'what tea', resultCount: 1, subjectKind: 'customer', metadata: { method: 'POST', statusCode: 200 } });
    expect(typeof searchRow.memoryIds).toBe('string');
    // Newest first, and no row names the subject in clear.
    expect(log.map((r: { id: string }) => r.id)).toEqual([...log.map((r: { id: string }) => r.id)].sort().reverse());
    expect(JSON.stringify(log)).not.toContain(carol.externalId);

    // The tombstone: the reason and counts; the subject's earlier queries are redacted.
    const deleted = (await h.call('POST', p.projectId, '/memory-compliance/hard-delete', { body: { subject: carol, reason: 'asked to be forgotten' } })).json();
    const after = await ok(await h.call('GET', p.projectId, `/memory-compliance/audit?subjectKind=customer&subjectExternalId=${carol.externalId}&eventTypes=subject.hard_delete,read.search`));
    const tomb = after.find((r: { eventType: string }) => r.eventType === 'subject.hard_delete');
    expect(tomb).toMatchObject({ id: deleted.auditEventId, metadata: { reason: 'asked to be forgotten', counts: { memories: 1 } } });
    expect(after.find((r: { eventType: string }) => r.eventType === 'read.search')).toMatchObject({ query: null, metadata: { queryRedacted: true } });
    // since: oldest first, strictly after; actor filter by key id.
    const since = await ok(await h.call('GET', p.projectId, `/memory-compliance/audit?since=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}&actor=${key.id}&limit=1000`));
    expect(since.length).toBeGreaterThanOrEqual(5);
    expect(since.map((r: { created: string }) => r.created)).toEqual([...since.map((r: { created: string }) => r.created)].sort());
    // subjectKind alone: every subject of that kind; before=<id> pages back through the newest-first listing.
    const kindOnly = await ok(await h.call('GET', p.projectId, '/memory-compliance/audit?subjectKind=customer&limit=1000'));
    expect(kindOnly.length).toBeGreaterThanOrEqual(5);
    expect(kindOnly.every((r: { subjectKind: string }) => r.subjectKind === 'customer')).toBe(true);
    const firstPage = await ok(await h.call('GET', p.projectId, '/memory-compliance/audit?limit=2'));
    const nextPage = await ok(await h.call('GET', p.projectId, `/memory-compliance/audit?limit=2&before=${firstPage[1].id}`));
    expect(nextPage).toHaveLength(2);
    expect(nextPage.every((r: { id: string }) => r.id < firstPage[1].id)).toBe(true);
    const nobody = await ok(await h.call('GET', p.projectId, '/memory-compliance/audit?actor=key_nobody'));
    expect(nobody).toEqual([]);
    const bad = await h.call('GET', p.projectId, '/memory-compliance/audit?subjectExternalId=x');
    expect(bad.statusCode).toBe(400);
  });

  it('keeps each project to its own log, export and delete', async () => {
    const log = await ok(await h.call('GET', other.projectId, `/memory-compliance/audit?limit=1000`));
    expect(log.every((r: { eventType: string }) => r.eventType !== 'subject.hard_delete')).toBe(true);
    // Project A's key on project B's path is refused before anything is read.
    const cross = await h.call('POST', other.projectId, '/memory-compliance/export', { apiKey: a.apiKey, body: { subject: alice } });
    expect(cross.statusCode).toBe(404);
    const crossDelete = await h.call('POST', other.projectId, '/memory-compliance/hard-delete', { apiKey: a.apiKey, body: { subject: alice, reason: 'x' } });
    expect(crossDelete.statusCode).toBe(404);
    expect((await exportOf(other, alice)).counts.memories).toBeGreaterThan(0);
  });

  it('puts export, hard delete and audit behind the memory.compliance entitlement; packs needs none', async () => {
    for (const [method, path, body] of [
      ['POST', '/memory-compliance/export', { subject: alice }],
      ['POST', '/memory-compliance/hard-delete', { subject: alice, reason: 'x' }],
      ['GET', '/memory-compliance/audit', undefined],
    ] as const) {
      const res = await h.call(method, free.projectId, path, { body });
      expect(res.statusCode, path).toBe(403);
      expect(res.json().code).toBe('FEATURE_DISABLED');
      expect(res.json().message).toMatch(/upgrade/i);
    }
    expect((await h.call('GET', free.projectId, '/memory-compliance/packs')).statusCode).toBe(200);
  });
});

describe('compliance: rows still queued, and the graph extraction built', () => {
  let h: Harness;
  beforeAll(async () => {
    // No consumers: queued typed batches stay queued.
    h = await createHarness({ consumers: false });
  });
  afterAll(() => h?.close());

  it('exports and erases the subject\'s rows in a queued batch, leaving the other rows of the batch to be ingested', async () => {
    const p = await h.project();
    const dana = { kind: 'patient', externalId: uniqueName('dana') };
    await h.call('POST', p.projectId, '/memory-typed/attributes', { body: { attributeKey: 'hr', dataType: 'numeric' } });
    const row = (externalId: string, v: number) => ({ attributeKey: 'hr', subjectKind: 'patient', subjectExternalId: externalId, valueNumeric: v, observedAt: new Date(Date.now() - v * 1000).toISOString() });
    const queued = await h.call('POST', p.projectId, '/memory-typed/observations/enqueue', { body: { observations: [row(dana.externalId, 60), row('ed', 61), row(dana.externalId, 62)] } });
    expect(queued.statusCode, queued.body).toBe(202);

    const bundle = (await h.call('POST', p.projectId, '/memory-compliance/export', { body: { subject: dana } })).json();
    expect(bundle.counts.queuedObservations).toBe(2);
    expect(bundle.export.queued_observations.map((r: { observation: { valueNumeric: number } }) => r.observation.valueNumeric).sort()).toEqual([60, 62]);

    const dry = (await h.call('POST', p.projectId, '/memory-compliance/hard-delete', { body: { subject: dana, reason: 'r', dryRun: true } })).json();
    expect(dry.queuedObservationsDeleted).toBe(2);
    const report = (await h.call('POST', p.projectId, '/memory-compliance/hard-delete', { body: { subject: dana, reason: 'r' } })).json();
    expect(report.queuedObservationsDeleted).toBe(2);
    const { rows } = await h.db.query<{ observations: { subjectExternalId: string }[]; row_count: number }>('SELECT observations, row_count FROM typed_ingest_batches WHERE project_id = $1', [p.projectId]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.row_count).toBe(1);
    expect(rows[0]!.observations.map((o) => o.subjectExternalId)).toEqual(['ed']);

    // A batch holding only the subject's rows goes whole.
    await h.call('POST', p.projectId, '/memory-typed/observations/enqueue', { body: { observations: [row(dana.externalId, 70)] } });
    await h.call('POST', p.projectId, '/memory-compliance/hard-delete', { body: { subject: dana, reason: 'r' } });
    expect((await h.db.query('SELECT 1 FROM typed_ingest_batches WHERE project_id = $1', [p.projectId])).rows).toHaveLength(1);
  });

  it('erases the mentions and edges extraction drew from the subject\'s memories, and the entities only they held', async () => {
    const p = await h.project();
    const erin = { kind: 'user', externalId: uniqueName('erin') };
    const frank = { kind: 'user', externalId: uniqueName('frank') };
    await h.call('POST', p.projectId, '/admin/memory/graph/extraction/toggle', { body: { enabled: true } });
    await h.call('POST', p.projectId, '/admin/memory', { body: { subject: erin, content: 'Erin Vance works at Quillfeather Labs in Porto.', type: 'fact' } });
    await h.call('POST', p.projectId, '/admin/memory', { body: { subject: frank, content: 'Frank Oduya works at Quillfeather Labs in Porto.', type: 'fact' } });
    const backfill = (await h.call('POST', p.projectId, '/admin/memory/graph/backfill', { body: {} })).json();
    expect(backfill.remaining).toBe(0);
    const names = async () => (await h.db.query<{ canonical_name: string }>('SELECT canonical_name FROM graph_entities WHERE project_id = $1 ORDER BY 1', [p.projectId])).rows.map((r) => r.canonical_name);
    expect(await names()).toEqual(expect.arrayContaining(['Erin Vance', 'Frank Oduya', 'Quillfeather Labs']));

    const bundle = (await h.call('POST', p.projectId, '/memory-compliance/export', { body: { subject: erin } })).json();
    expect(bundle.counts.graphMentions).toBeGreaterThanOrEqual(2);
    expect(bundle.export.graph_entities.map((e: { canonical_name: string }) => e.canonical_name)).toEqual(expect.arrayContaining(['Erin Vance', 'Quillfeather Labs']));
    expect(bundle.counts.graphEdges).toBeGreaterThan(0);

    const report = (await h.call('POST', p.projectId, '/memory-compliance/hard-delete', { body: { subject: erin, reason: 'r' } })).json();
    expect(report.graphEdgesDeleted).toBe(bundle.counts.graphEdges);
    // Erin's entity existed only for her; the company and the city are Frank's too.
    const after = await names();
    expect(after).not.toContain('Erin Vance');
    expect(after).toEqual(expect.arrayContaining(['Frank Oduya', 'Quillfeather Labs']));
    expect((await h.db.query(`SELECT 1 FROM graph_edges g JOIN graph_entities e ON e.project_id = g.project_id AND e.id = g.subject_id WHERE g.project_id = $1 AND e.canonical_name = 'Frank Oduya'`, [p.projectId])).rows.length).toBeGreaterThan(0);
  });
});
