// Every HTTP call of the public clients (issue 35): the TypeScript client ThinkfleetAI/thinkfleet-memory-sdk
// (src/resources/*.ts, src/integrations/*) and the Python client ThinkfleetAI/memmesh-python
// (src/memmesh/resources/*.py), one row per distinct call a client method makes, with the body or query
// the client builds from an ordinary use of the method (keys it drops when unset are left out here too).
// Read from the clients' newest stored sources: TS memory.ts of 27,192 characters (observe by text,
// merge, llm-consolidate), context.ts with forConversation, events.ts with emit, brains.ts with
// createFromProject; Python commit 722ec09 (memory.py with validFrom and llm-consolidate, compliance.py
// with the pack settings, events.py with emit, brains.py, alerts.py, typed.py ...).
//
// Paths are relative to /api/v1/projects/{projectId}. `{name}` is a placeholder test/clients/surface.test.ts
// fills with an id it seeds: {memoryId} (a fresh memory of the subject contact:c-gym), {pendingMemoryId}
// (a fresh pending one), {patternId} (a mined behavior_pattern of c-gym, also a memory), {contactId}
// (c-gym), {entityId} (a graph entity with an edge), {alertId}, {brainId} and {decisionId} (fresh ones).
//
// Transport, as each client sends it (SDK-WIRE.md 1): the TS client sends `Authorization: Bearer`, and
// `Content-Type: application/json` with the JSON body on POST, PUT and PATCH only; query values are
// String()ed and undefined ones dropped. The Python client sends `Authorization`, `User-Agent:
// memmesh-python/<version>` and `Content-Type: application/json` on every request, GET and DELETE
// included (no body on those); httpx writes booleans in queries as true/false and drops None.
//
// `reads` is what the client does with a 2xx: the TS client parses every 2xx but 204 as JSON (an empty
// 200 breaks it); the Python client tolerates an empty body. `array`: a bare JSON array; `object`: a
// JSON object; `{ key }`: an object whose `key` is the array the client unwraps; `nothing`: a void
// method (204 or any JSON body). `fields`: keys the client's own code reads from the answer (beyond
// its types), which must be there.
//
// `expectError`: the call is behind a deployment switch that is off by default, and the answer is the
// documented error (docs/api/README.md "Errors"; src/platform/errors.ts), which the clients surface as such.

export type Client = 'ts' | 'py';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Reads = 'array' | 'object' | 'nothing' | { key: string };

export interface ClientCall {
  client: Client;
  /** The client method, as its users call it (TS: tf.<sdk>, Python: mm.<sdk>). */
  sdk: string;
  method: HttpMethod;
  /** Relative to /api/v1/projects/{projectId}, with {placeholders}. */
  path: string;
  query?: Record<string, string | number | boolean>;
  body?: unknown;
  /** Headers the caller sends beyond the client's own (an MCP client's Accept). */
  headers?: Record<string, string>;
  reads: Reads;
  /** Keys the client code itself dereferences in the answer (of the object, or of each item of an array). */
  fields?: string[];
  expectError?: { status: number; code: string; because: string };
  note?: string;
}

const subject = { kind: 'contact', externalId: 'c-gym' };
const patient = { kind: 'patient', externalId: 'p-7' };
const portfolio = { kind: 'portfolio', externalId: 'acct-123' };
const ticker = { kind: 'ticker', externalId: 'AAPL' };

/** A 1x1 PNG, the header of a WAV, and a short text document, base64 as the clients send them. */
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const WAV_B64 = Buffer.concat([Buffer.from('RIFF'), Buffer.from([36, 0, 0, 0]), Buffer.from('WAVEfmt '), Buffer.alloc(28)]).toString('base64');
const TEXT_B64 = Buffer.from('ACME MSA dated 2026-04-12. Term: 24 months. Payment terms: NET 30.\n').toString('base64');

const MEDIA_OFF = { status: 503, code: 'NOT_CONFIGURED', because: 'media ingest is off by default (MEMORY_MULTIMODAL_ENABLED)' };
const REFLECTION_OFF = { status: 503, code: 'NOT_CONFIGURED', because: 'reflection is off by default (MEMORY_REFLECTION_ENABLED, with MODEL_GATEWAY_URL)' };

/** The procedure both clients render into content (TS src/core/procedural.ts; Python render_procedure_content). */
const procedure = {
  goal: 'Refund a duplicate charge',
  whenToUse: 'A customer reports being charged twice',
  steps: [{ text: 'Find both charges in the billing console' }, { text: 'Refund the later one', pitfall: 'never the original' }],
  failureModes: ['Refunding before the second charge settles'],
};
const procedureContent = [
  'Goal: Refund a duplicate charge',
  'When: A customer reports being charged twice',
  'Steps:',
  '1. Find both charges in the billing console',
  '2. Refund the later one (watch out: never the original)',
  'Avoid:',
  '- Refunding before the second charge settles',
].join('\n');

const precedencePolicy = { defaultOrder: ['human_verified', 'local', 'licensed_brain', 'base'], scopeNearestWins: true, overrides: [{ category: 'billing', winningTier: 'human_verified' }] };

const alertRule = (name: string) => ({
  name,
  description: 'Tell the next context build when a VIP is at risk',
  enabled: true,
  trigger: { kind: 'engine-event', eventTypes: ['risk.fired'] },
  filter: { subjectKind: 'contact', subjectExternalIdPattern: 'vip-*', metadataMatch: { riskKind: 'rfm_at_risk_high_value' } },
  notify: [{ kind: 'memory', writeAs: { content: 'Risk fired: {{subject.kind}}/{{subject.externalId}} - investigate.', scope: 'project' } }],
  throttle: { dedupOn: 'subject', cooldownMinutes: 60 },
});

const observations = (source: string) => ({
  observations: [{ attributeKey: 'credit_score', subjectKind: 'contact', subjectExternalId: 'c-gym', valueNumeric: 650, observedAt: '2025-06-01T00:00:00.000Z', source, trust: 1 }],
});

const contextOptions = { include: ['profile', 'patterns', 'predictions', 'memories', 'observations'], maxTokens: 2000, memoryLimit: 10, predictionLimit: 5, excludeCategories: ['health'] };

// ── The TypeScript client ────────────────────────────────────────────────────────────────────────

const ts: Omit<ClientCall, 'client'>[] = [
  // tf.memory (src/resources/memory.ts)
  {
    sdk: 'memory.observe({ text })',
    method: 'POST',
    path: '/memory/observe',
    body: { text: "I'm Priya. I just moved to Denver and I prefer email over calls.", role: 'user', userId: 'u-priya', agentId: 'agent-1', sessionId: 's-1', occurredAt: '2025-06-01T10:00:00.000Z' },
    fields: ['saved', 'candidateCount'], reads: { key: 'saved' },
  },
  {
    sdk: 'memory.observe({ content }) (legacy)',
    method: 'POST',
    path: '/admin/memory',
    body: {
      content: 'Ordered large pepperoni pizza, no tip',
      type: 'event',
      scope: 'project',
      importance: 5,
      source: 'admin_created',
      validFrom: '2025-06-01T19:30:00.000Z',
      metadata: { subject: { kind: 'contact', externalId: 'sarah-pizza' }, eventType: 'pizza_order', occurredAt: '2025-06-01T19:30:00.000Z', total: 38.5, currency: 'USD' },
    },
    reads: 'object',
  },
  {
    sdk: 'memory.observeImage',
    method: 'POST',
    path: '/memory/attachments',
    body: { subject, mimeType: 'image/png', fileName: 'receipt.png', content: 'Receipt for $38 pizza order', activityType: 'receipt', occurredAt: '2025-06-01T19:31:00.000Z', dataBase64: PNG_B64 },
    reads: 'object',
  },
  {
    sdk: 'memory.observeVoice',
    method: 'POST',
    path: '/memory/attachments',
    body: { subject: { kind: 'user', externalId: 'ryan' }, mimeType: 'audio/wav', fileName: 'voicenote.wav', content: 'Reminder to follow up on the SOC 2 audit next week', dataBase64: WAV_B64 },
    reads: 'object',
  },
  {
    sdk: 'memory.observeDocument',
    method: 'POST',
    path: '/memory/attachments',
    body: { subject: { kind: 'project', externalId: 'acme-contract' }, mimeType: 'text/plain', fileName: 'acme-msa.txt', content: 'ACME MSA dated 2026-04-12. Term: 24 months. Payment terms: NET 30.', importance: 7, metadata: { counterparty: 'ACME' }, dataBase64: TEXT_B64 },
    reads: 'object',
  },
  {
    sdk: 'memory.ingestMedia',
    method: 'POST',
    path: '/memory/media',
    body: { mimeType: 'image/png', source: 'receipt.png', userId: 'u-priya', dataBase64: PNG_B64 },
    reads: { key: 'saved' },
    expectError: MEDIA_OFF,
  },
  { sdk: 'memory.mine', method: 'GET', path: '/memory/mine', query: { limit: 20, offset: 0 }, reads: 'array' },
  { sdk: 'memory.delete', method: 'DELETE', path: '/memory/{memoryId}', reads: 'nothing' },
  { sdk: 'memory.explain', method: 'GET', path: '/admin/memory/{patternId}', fields: ['id', 'metadata'], reads: 'object', note: 'then one GET /admin/memory/{id} per metadata.sourceMemoryIds' },
  { sdk: 'memory.submitFeedback', method: 'POST', path: '/memory/feedback', body: { memoryId: '{memoryId}', rating: 'negative', responseId: 'resp-1', comment: 'Out of date' }, reads: 'nothing' },
  // tf.memory.consent (src/resources/consent.ts): composed of admin list, delete and create
  { sdk: 'memory.consent.getStatus', method: 'GET', path: '/admin/memory', query: { limit: 500 }, fields: ['id', 'type', 'metadata', 'created'], reads: 'array' },
  { sdk: 'memory.consent.optOut (drops the prior record)', method: 'DELETE', path: '/admin/memory/{memoryId}', reads: 'nothing' },
  {
    sdk: 'memory.consent.optOut',
    method: 'POST',
    path: '/admin/memory',
    body: {
      content: '[consent] contact:c-gym opted out',
      type: 'consent',
      scope: 'project',
      importance: 10,
      category: 'consent',
      metadata: { subject, optedOut: true, optedOutAt: '2025-06-02T00:00:00.000Z', reason: 'GDPR Art. 17 request 2025-06-02', recordKind: 'consent' },
    },
    fields: ['id'], reads: 'object',
  },
  {
    sdk: 'memory.consent.optIn',
    method: 'POST',
    path: '/admin/memory',
    body: { content: '[consent] contact:c-gym opted in', type: 'consent', scope: 'project', importance: 10, category: 'consent', metadata: { subject, optedOut: false, optedOutAt: null, reason: null, recordKind: 'consent' } },
    fields: ['id'], reads: 'object',
  },
  // tf.memory.admin
  {
    sdk: 'memory.admin.list',
    method: 'GET',
    path: '/admin/memory',
    query: { type: 'event', scope: 'project', status: 'confirmed', source: 'admin_created', chatbotId: 'agent-1', chatIdentityId: 'u-priya', limit: 50, offset: 0 },
    reads: 'array',
  },
  { sdk: 'memory.admin.listAll', method: 'GET', path: '/admin/memory', query: { type: 'event', limit: 500, offset: 0 }, reads: 'array' },
  { sdk: 'memory.admin.get', method: 'GET', path: '/admin/memory/{memoryId}', reads: 'object' },
  { sdk: 'memory.admin.listPlatform', method: 'GET', path: '/admin/memory/platform', query: { status: 'confirmed', limit: 50, offset: 0 }, reads: 'array' },
  { sdk: 'memory.admin.listPendingReview', method: 'GET', path: '/admin/memory/review', query: { limit: 50, offset: 0 }, reads: 'array' },
  { sdk: 'memory.admin.stats', method: 'GET', path: '/admin/memory/stats', reads: 'object' },
  {
    sdk: 'memory.admin.create',
    method: 'POST',
    path: '/admin/memory',
    body: {
      content: 'Support hours are 9am to 5pm Mountain time',
      type: 'fact',
      category: 'support',
      importance: 6,
      source: 'admin_created',
      scope: 'project',
      chatbotId: 'agent-1',
      chatIdentityId: 'u-priya',
      sessionKey: 's-1',
      metadata: { origin: 'handbook' },
      impact: 'LOW',
      validFrom: '2025-05-01T00:00:00.000Z',
    },
    reads: 'object',
  },
  {
    sdk: 'memory.admin.createProcedure',
    method: 'POST',
    path: '/admin/memory',
    body: { type: 'procedure', content: procedureContent, category: 'billing', scope: 'project', importance: 7, metadata: procedure },
    reads: 'object',
  },
  { sdk: 'memory.admin.getPrecedence', method: 'GET', path: '/admin/memory/precedence', reads: 'object' },
  { sdk: 'memory.admin.setPrecedence', method: 'PUT', path: '/admin/memory/precedence', body: precedencePolicy, reads: 'object' },
  { sdk: 'memory.admin.update', method: 'PATCH', path: '/admin/memory/{memoryId}', body: { content: 'Seed memory, edited', type: 'fact', category: 'notes', importance: 8, scope: 'project', status: 'confirmed' }, reads: 'object' },
  { sdk: 'memory.admin.confirm', method: 'POST', path: '/admin/memory/{pendingMemoryId}/confirm', body: { status: 'confirmed', comment: 'Checked with the customer' }, reads: 'object' },
  { sdk: 'memory.admin.promote', method: 'POST', path: '/admin/memory/{memoryId}/promote', body: { targetScope: 'platform' }, reads: 'object' },
  {
    sdk: 'memory.admin.search',
    method: 'POST',
    path: '/admin/memory/search',
    body: { query: 'gym visits', chatIdentityId: 'u-priya', scope: 'project', status: 'confirmed', limit: 10, offset: 0 },
    reads: 'array',
  },
  { sdk: 'memory.admin.delete', method: 'DELETE', path: '/admin/memory/{memoryId}', reads: 'nothing' },
  { sdk: 'memory.admin.consolidate', method: 'POST', path: '/admin/memory/llm-consolidate', body: { subject, windowDays: 30 }, reads: 'object' },
  { sdk: 'memory.admin.backfillEmbeddings', method: 'POST', path: '/admin/memory/embeddings/backfill', body: { batch: 500 }, reads: 'object' },
  { sdk: 'memory.admin.merge', method: 'POST', path: '/admin/memory/merge', body: { dryRun: true, threshold: 0.92, maxClusters: 100, maxClusterSize: 8 }, reads: 'object' },
  { sdk: 'memory.admin.dedup', method: 'POST', path: '/admin/memory/dedup', body: { threshold: 0.92, scanLimit: 1000 }, reads: 'object' },
  { sdk: 'memory.admin.reflect', method: 'POST', path: '/admin/memory/reflect', body: { userId: 'u-priya', maxSources: 50, maxInsights: 5, dryRun: true }, reads: 'object', expectError: REFLECTION_OFF },
  { sdk: 'memory.admin.prefetchRelated', method: 'POST', path: '/admin/memory/prefetch-related', body: { seedMemoryIds: ['{memoryId}'], limit: 10 }, reads: 'array' },
  { sdk: 'memory.admin.listFeedback', method: 'GET', path: '/admin/memory/{memoryId}/feedback', reads: 'array' },
  // tf.memory.admin.graph (src/resources/graph.ts)
  { sdk: 'memory.admin.graph.stats', method: 'GET', path: '/admin/memory/graph/stats', reads: 'object' },
  { sdk: 'memory.admin.graph.listEntities', method: 'GET', path: '/admin/memory/entities', query: { type: 'person', scope: 'project', search: 'sarah', limit: 50, offset: 0 }, reads: 'array' },
  { sdk: 'memory.admin.graph.getEntity', method: 'GET', path: '/admin/memory/entities/{entityId}', query: { asOf: '2030-01-01T00:00:00.000Z' }, reads: 'object' },
  { sdk: 'memory.admin.graph.listEdges', method: 'GET', path: '/admin/memory/graph/edges', query: { limit: 1000 }, reads: 'array' },
  { sdk: 'memory.admin.graph.traverse', method: 'POST', path: '/admin/memory/graph/traverse', body: { entityId: '{entityId}', hops: 2, predicates: ['works_at'] }, reads: 'array' },
  // tf.lattice (src/resources/lattice.ts)
  { sdk: 'lattice.extractPatterns', method: 'POST', path: '/lattice/patterns/extract', body: { contactId: '{contactId}', windowDays: 90, force: true }, reads: 'object' },
  { sdk: 'lattice.mineMemories', method: 'POST', path: '/lattice/patterns/extract', body: { subject, windowDays: 90, source: 'memories' }, reads: 'object' },
  { sdk: 'lattice.getPattern', method: 'GET', path: '/lattice/patterns/{patternId}', reads: 'object', note: 'the id is encodeURIComponent()ed' },
  { sdk: 'lattice.listPatterns', method: 'GET', path: '/lattice/contacts/{contactId}/patterns', query: { activeOnly: true, limit: 50 }, fields: ['data', 'nextCursor'], reads: { key: 'data' } },
  { sdk: 'lattice.getContext', method: 'GET', path: '/lattice/contacts/{contactId}/context', query: { eventsLimit: 25, memoriesLimit: 25, graphHops: 1 }, reads: 'object' },
  { sdk: 'lattice.runMonitorTick', method: 'POST', path: '/lattice/monitor/tick', body: {}, reads: 'object' },
  { sdk: 'lattice.getMonitorStatus', method: 'GET', path: '/lattice/monitor/status', reads: 'object' },
  {
    sdk: 'lattice.predict',
    method: 'POST',
    path: '/lattice/predict',
    body: { subject, horizonDays: 30, limit: 20, minConfidence: 0.5, occurrencesPerPattern: 1, emitEvents: false, imminentWithinHours: 48 },
    reads: { key: 'predictions' },
  },
  { sdk: 'lattice.predictTarget', method: 'POST', path: '/lattice/predict', body: { subject, target: { kind: 'event_occurrence', eventType: 'gym' }, horizonDays: 90 }, fields: ['targetPrediction'], reads: 'object' },
  { sdk: 'lattice.getProfile', method: 'POST', path: '/lattice/profile', body: { subject }, reads: 'object' },
  { sdk: 'lattice.getCohort', method: 'POST', path: '/lattice/cohort', body: { subject, k: 10, minSimilarity: 0.5 }, reads: { key: 'members' } },
  { sdk: 'lattice.predictByCohort', method: 'POST', path: '/lattice/cohort/predict', body: { subject, cohortK: 10, predictionLimit: 5 }, reads: { key: 'predictions' } },
  { sdk: 'lattice.estimate', method: 'POST', path: '/lattice/estimate', body: { subject: patient, estimatorId: 'phenoage' }, reads: 'object' },
  { sdk: 'lattice.getCalibration', method: 'GET', path: '/lattice/calibration', query: { bucketCount: 5 }, reads: { key: 'buckets' } },
  // tf.learning (src/resources/learning.ts)
  {
    sdk: 'learning.recordDecision',
    method: 'POST',
    path: '/lattice/decisions',
    body: {
      subject,
      actor: 'policy:winback-v1',
      decisionType: 'offer',
      policy: 'winback-v1',
      informedBy: [{ memoryId: '{patternId}', refType: 'pattern' }],
      actionType: 'apply_discount',
      params: { pct: '15' },
      status: 'executed',
      occurredAt: '2025-06-02T09:00:00.000Z',
      metadata: { channel: 'email' },
      idempotencyKey: 'ts-decision-1',
    },
    fields: ['decision'], reads: 'object',
  },
  {
    sdk: 'learning.recordOutcome',
    method: 'POST',
    path: '/lattice/outcomes',
    body: { decisionId: '{decisionId}', outcomeType: 'conversion', result: 'success', reward: 84, attributionWindowSecs: 604800, metadata: { order: 'o-1' }, idempotencyKey: 'ts-outcome-1' },
    reads: { key: 'updates' },
  },
  { sdk: 'learning.getOutcomes', method: 'GET', path: '/lattice/outcomes', query: { subjectKind: 'contact', subjectExternalId: 'c-gym', decisionType: 'offer', actionType: 'apply_discount', limit: 100 }, reads: { key: 'outcomes' } },
  { sdk: 'learning.getEffectiveness', method: 'GET', path: '/lattice/effectiveness', query: { groupBy: 'action_type', minSupport: 1 }, reads: { key: 'rows' } },
  // tf.behaviors (src/resources/behaviors.ts)
  { sdk: 'behaviors.discover', method: 'POST', path: '/lattice/discover', body: { simThreshold: 0.75, minClusterSize: 3, minStability: 0.6, maxMembers: 50 }, reads: { key: 'behaviors' } },
  // tf.context (src/resources/context.ts)
  {
    sdk: 'context.forConversation',
    method: 'POST',
    path: '/memory/context',
    body: { turns: [{ role: 'user', content: "Hi, I'm Priya." }, { role: 'assistant', content: 'Hello Priya!' }, { role: 'user', content: 'Where do I live now?' }], intent: 'answer the question', tokenBudget: 800, limit: 25, excludeCategories: ['health'] },
    fields: ['context', 'subject', 'memoryIds', 'tokensEstimate', 'tokenBudget', 'droppedForBudget', 'query'], reads: 'object',
  },
  { sdk: 'context.forConversation({ conversation })', method: 'POST', path: '/memory/context', body: { conversation: 'Priya: I moved last month.\nagent: Where to?\nPriya: Denver.' }, fields: ['context', 'subject', 'memoryIds', 'tokensEstimate', 'tokenBudget', 'droppedForBudget', 'query'], reads: 'object' },
  { sdk: 'context.forConversation({ brainId })', method: 'POST', path: '/memory/context', body: { turns: [{ role: 'user', content: 'What are the support hours?' }], brainId: '{brainId}' }, fields: ['context', 'subject', 'memoryIds', 'tokensEstimate', 'tokenBudget', 'droppedForBudget', 'query'], reads: 'object' },
  { sdk: 'context.build', method: 'POST', path: '/lattice/context', body: { subject, ...contextOptions }, reads: 'object' },
  { sdk: 'context.batchBuild', method: 'POST', path: '/lattice/context/batch', body: { subjects: [subject, { kind: 'contact', externalId: 'sarah-pizza' }], ...contextOptions }, reads: { key: 'bundles' } },
  { sdk: 'context.queryGraph', method: 'POST', path: '/lattice/graph/query', body: { subjectId: '{entityId}', predicate: 'works_at', limit: 100 }, reads: { key: 'edges' } },
  // tf.events (src/resources/events.ts); subscribe() polls the same route
  { sdk: 'events.poll', method: 'GET', path: '/memory-events', query: { since: '2025-01-01T00:00:00.000Z', limit: 100, eventTypes: 'pattern.emerged,risk.fired' }, reads: 'array' },
  {
    sdk: 'events.emit',
    method: 'POST',
    path: '/lattice/events/emit',
    body: { eventType: 'cart.abandoned', subject, severity: 'warn', payloadJson: JSON.stringify({ cartValue: 84 }), sourceMemoryIds: ['{memoryId}'], sourcePatternId: '{patternId}' },
    reads: 'object',
  },
  // tf.alerts (src/resources/alerts.ts)
  { sdk: 'alerts.list', method: 'GET', path: '/memory-alerts', reads: 'array' },
  { sdk: 'alerts.get', method: 'GET', path: '/memory-alerts/{alertId}', reads: 'object' },
  { sdk: 'alerts.create', method: 'POST', path: '/memory-alerts', body: alertRule('VIP at risk (ts)'), reads: 'object' },
  { sdk: 'alerts.update', method: 'PATCH', path: '/memory-alerts/{alertId}', body: { name: 'VIP at risk, hourly', description: null, filter: null, throttle: { maxPerHour: 10, dedupOn: 'subject+rule' } }, reads: 'object' },
  { sdk: 'alerts.enable', method: 'PATCH', path: '/memory-alerts/{alertId}', body: { enabled: true }, reads: 'object' },
  { sdk: 'alerts.disable', method: 'PATCH', path: '/memory-alerts/{alertId}', body: { enabled: false }, reads: 'object' },
  { sdk: 'alerts.delete', method: 'DELETE', path: '/memory-alerts/{alertId}', reads: 'nothing' },
  { sdk: 'alerts.listFires', method: 'GET', path: '/memory-alerts/{alertId}/fires', reads: 'array' },
  // tf.compliance (src/resources/compliance.ts)
  { sdk: 'compliance.exportSubject', method: 'POST', path: '/memory-compliance/export', body: { subject }, reads: 'object' },
  { sdk: 'compliance.hardDeleteSubject', method: 'POST', path: '/memory-compliance/hard-delete', body: { subject, reason: 'GDPR Art. 17 case 2025-06-02-A', dryRun: true }, reads: 'object' },
  {
    sdk: 'compliance.listAuditEvents',
    method: 'GET',
    path: '/memory-compliance/audit',
    query: { subjectKind: 'contact', subjectExternalId: 'c-gym', since: '2025-01-01T00:00:00.000Z', limit: 100, eventTypes: 'read.context,read.export' },
    reads: 'array',
  },
  { sdk: 'compliance.listPacks', method: 'GET', path: '/memory-compliance/packs', reads: 'array' },
  // tf.health (src/resources/health.ts): writers post memories, readers need the health feature and pack
  {
    sdk: 'health.recordBiomarker',
    method: 'POST',
    path: '/admin/memory',
    body: { content: 'hba1c = 6.2 %', type: 'fact', scope: 'project', category: 'health', source: 'sdk:health', metadata: { subject: patient, health: { biomarker: 'hba1c', value: 6.2, unit: '%', observedAt: '2025-05-20T08:00:00.000Z' } } },
    reads: 'object',
  },
  {
    sdk: 'health.recordDemographics',
    method: 'POST',
    path: '/admin/memory',
    body: { content: 'Demographics update', type: 'fact', scope: 'project', category: 'health', source: 'sdk:health', metadata: { subject: patient, demographic: { ageYears: 54, sex: 'female', weightKg: 82, heightCm: 170, activity: 'low' } } },
    reads: 'object',
  },
  {
    sdk: 'health.recordCondition',
    method: 'POST',
    path: '/admin/memory',
    body: { content: 'Diagnosis I10', type: 'fact', scope: 'project', category: 'health', source: 'sdk:health', metadata: { subject: patient, condition: { icd10: 'I10', status: 'active', onsetAt: '2024-11-01T00:00:00.000Z' } } },
    reads: 'object',
  },
  { sdk: 'health.getProfile', method: 'POST', path: '/lattice/health/profile', body: { subject: patient }, reads: 'object' },
  { sdk: 'health.getCohortRisk', method: 'POST', path: '/lattice/health/cohort-risk', body: { subject: patient, k: 25 }, reads: { key: 'risks' } },
  // tf.financial (src/resources/financial.ts): writers post memories; the readers are being built
  {
    sdk: 'financial.ingestPrice',
    method: 'POST',
    path: '/admin/memory',
    body: { content: 'AAPL close 189.84 @ 2025-06-02', type: 'fact', scope: 'project', category: 'financial', source: 'sdk:financial', metadata: { price: { ticker: 'AAPL', close: 189.84, asOf: '2025-06-02' } } },
    reads: 'object',
    note: 'ingestPrices makes this call once per bar',
  },
  {
    sdk: 'financial.ingestFundamentals',
    method: 'POST',
    path: '/admin/memory',
    body: { content: 'Fundamentals AAPL', type: 'fact', scope: 'project', category: 'financial', source: 'sdk:financial', metadata: { fundamental: { ticker: 'AAPL', peRatio: 29.1, marketCap: 2.9e12 } } },
    reads: 'object',
  },
  {
    sdk: 'financial.ingestHolding',
    method: 'POST',
    path: '/admin/memory',
    body: { content: 'Holding 100 AAPL', type: 'fact', scope: 'project', category: 'financial', source: 'sdk:financial', metadata: { subject: portfolio, holding: { ticker: 'AAPL', shares: 100, costBasis: 150 } } },
    reads: 'object',
  },
  {
    sdk: 'financial.ingestNews',
    method: 'POST',
    path: '/admin/memory',
    body: { content: 'News [AAPL]: Apple beats earnings', type: 'fact', scope: 'project', category: 'financial', source: 'sdk:financial', metadata: { newsEvent: { ticker: 'AAPL', headline: 'Apple beats earnings', sentiment: 0.7 } } },
    reads: 'object',
  },
  { sdk: 'financial.getProfile', method: 'POST', path: '/lattice/financial/profile', body: { subject: portfolio }, reads: 'object', fields: ['subject', 'indicators', 'fundamentals', 'positions', 'unpricedHoldings', 'disclaimer', 'generatedAt'] },
  { sdk: 'financial.predict', method: 'POST', path: '/lattice/financial/predict', body: { subject: ticker, horizonDays: 30, persist: true }, reads: 'object', fields: ['signals', 'strategy', 'strategyReliability', 'resolvedSample', 'disclaimer'] },
  { sdk: 'financial.reconcile', method: 'POST', path: '/lattice/financial/reconcile', body: {}, reads: 'object', fields: ['scored', 'hits', 'misses', 'stillPending'] },
  { sdk: 'financial.getCalibration', method: 'POST', path: '/lattice/financial/calibration', body: { bucketCount: 5 }, reads: 'object', fields: ['buckets', 'strategy', 'strategyReliability', 'totalResolved'] },
  // tf.typed (src/resources/typed.ts)
  {
    sdk: 'typed.registerAttribute',
    method: 'POST',
    path: '/memory-typed/attributes',
    body: { attributeKey: 'credit_score', dataType: 'numeric', unit: 'points', minValid: 300, maxValid: 850, required: false, metadata: { bureau: 'experian' } },
    reads: 'object',
  },
  { sdk: 'typed.listAttributes', method: 'GET', path: '/memory-typed/attributes', query: { attributeKey: 'credit_score', limit: 50, offset: 0 }, reads: 'array' },
  { sdk: 'typed.ingest', method: 'POST', path: '/memory-typed/observations', body: observations('ts-bureau'), reads: 'object' },
  { sdk: 'typed.enqueue', method: 'POST', path: '/memory-typed/observations/enqueue', body: observations('ts-queue'), reads: 'object' },
  {
    sdk: 'typed.queryObservations',
    method: 'GET',
    path: '/memory-typed/observations',
    query: { subjectKind: 'contact', subjectExternalId: 'c-gym', attributeKey: 'credit_score', since: '2025-01-01T00:00:00.000Z', until: '2026-12-31T00:00:00.000Z', minValue: 300, maxValue: 850, status: 'accepted', limit: 100, offset: 0 },
    reads: 'array',
  },
  { sdk: 'typed.accumulator', method: 'GET', path: '/memory-typed/accumulator', query: { subjectKind: 'contact', subjectExternalId: 'c-gym', attributeKey: 'credit_score' }, reads: 'object' },
  // tf.brains (src/resources/brains.ts)
  {
    sdk: 'brains.create',
    method: 'POST',
    path: '/brains',
    body: { externalId: 'sec-edgar-financials-ts', name: 'SEC EDGAR Financials', domain: 'finance', version: '2026.07.0', card: { provenance: [{ source: 'SEC EDGAR', license: 'public-domain' }] } },
    reads: 'object',
  },
  {
    sdk: 'brains.createFromProject',
    method: 'POST',
    path: '/brains',
    body: { externalId: 'support-playbook-ts', name: 'Support Playbook', domain: 'support', version: '1.0.0', visibility: 'PRIVATE', card: { provenance: [], coverage: {} } },
    reads: 'object',
  },
  { sdk: 'brains.list', method: 'GET', path: '/brains', query: { limit: 20 }, fields: ['data', 'next', 'previous'], reads: { key: 'data' } },
  { sdk: 'brains.get', method: 'GET', path: '/brains/{brainId}', reads: 'object' },
  {
    sdk: 'brains.update',
    method: 'PATCH',
    path: '/brains/{brainId}',
    body: { version: '2026.08.0', rightsAttested: true, visibility: 'PUBLIC', status: 'PUBLISHED', card: { provenance: [{ source: 'SEC EDGAR', license: 'public-domain' }] } },
    reads: 'object',
  },
  { sdk: 'brains.delete', method: 'DELETE', path: '/brains/{brainId}', reads: 'nothing' },
  {
    sdk: 'brains (MCP consumption, named in brains.ts and types/brain.ts)',
    method: 'POST',
    path: '/brains/{brainId}/mcp-server/http',
    body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'client', version: '1' } } },
    headers: { accept: 'application/json, text/event-stream' },
    reads: 'object',
    note: 'an MCP client connects here (Streamable HTTP), not the REST client',
  },
  // src/integrations: MemoryMiddleware (withOpenAI, withAnthropic, memoryMiddleware, withMemory)
  {
    sdk: 'integrations MemoryMiddleware.context (withOpenAI / withAnthropic / memoryMiddleware)',
    method: 'POST',
    path: '/memory/context',
    body: { turns: [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: 'What plan am I on?' }] },
    fields: ['context', 'subject', 'memoryIds', 'tokensEstimate', 'tokenBudget', 'droppedForBudget', 'query'], reads: 'object',
  },
  {
    sdk: 'integrations MemoryMiddleware.capture',
    method: 'POST',
    path: '/memory/observe',
    body: { text: 'What plan am I on?\nassistant: You are on the Pro plan.', role: 'user', userId: 'u-priya', sessionId: 's-2' },
    fields: ['saved', 'candidateCount'], reads: { key: 'saved' },
  },
];

// ── The Python client ────────────────────────────────────────────────────────────────────────────

const py: Omit<ClientCall, 'client'>[] = [
  // mm.memory (resources/memory.py)
  { sdk: 'memory.observe(text=)', method: 'POST', path: '/memory/observe', body: { text: 'Moved to the annual plan, prefers email.', role: 'user', occurredAt: '2025-06-01T10:00:00.000Z' }, fields: ['saved', 'candidateCount'], reads: { key: 'saved' } },
  {
    sdk: 'memory.observe(content) (legacy)',
    method: 'POST',
    path: '/admin/memory',
    body: {
      content: 'Order - pizza',
      type: 'event',
      scope: 'project',
      importance: 5,
      source: 'admin_created',
      metadata: { subject: { kind: 'contact', externalId: 'sarah' }, eventType: 'order_placed', occurredAt: '2025-06-01T19:30:00.000Z', amount: 42.0 },
      validFrom: '2025-06-01T19:30:00.000Z',
      category: 'orders',
    },
    reads: 'object',
  },
  { sdk: 'memory.ingest_media', method: 'POST', path: '/memory/media', body: { dataBase64: PNG_B64, mimeType: 'image/png', userId: 'u-priya', source: 'receipt.png' }, reads: { key: 'saved' }, expectError: MEDIA_OFF },
  { sdk: 'memory.observe_image', method: 'POST', path: '/memory/attachments', body: { subject, mimeType: 'image/png', fileName: 'receipt.png', content: 'Receipt for the blue bike', importance: 6, dataBase64: PNG_B64 }, reads: 'object' },
  { sdk: 'memory.observe_voice', method: 'POST', path: '/memory/attachments', body: { subject, mimeType: 'audio/wav', content: 'Call me back after five', activityType: 'voicemail', occurredAt: '2025-06-03T17:00:00.000Z', dataBase64: WAV_B64 }, reads: 'object' },
  { sdk: 'memory.observe_document', method: 'POST', path: '/memory/attachments', body: { subject, mimeType: 'text/plain', fileName: 'notes.txt', content: 'Contract renewal notes', metadata: { folder: 'legal' }, dataBase64: TEXT_B64 }, reads: 'object' },
  { sdk: 'memory.create', method: 'POST', path: '/admin/memory', body: { content: 'Refunds take five business days', type: 'fact', scope: 'project', importance: 5, category: 'billing', metadata: { origin: 'faq' }, validFrom: '2025-04-01T00:00:00.000Z' }, reads: 'object' },
  { sdk: 'memory.create_procedure', method: 'POST', path: '/admin/memory', body: { content: procedureContent, type: 'procedure', scope: 'project', importance: 7, category: 'billing', metadata: procedure }, reads: 'object' },
  { sdk: 'memory.list_pending_review', method: 'GET', path: '/admin/memory/review', query: { limit: 50, offset: 0 }, reads: 'array' },
  { sdk: 'memory.get_precedence', method: 'GET', path: '/admin/memory/precedence', reads: 'object' },
  { sdk: 'memory.set_precedence', method: 'PUT', path: '/admin/memory/precedence', body: precedencePolicy, reads: 'object' },
  { sdk: 'memory.search', method: 'POST', path: '/admin/memory/search', body: { query: 'billing preferences', limit: 10, offset: 10, scope: 'project', status: 'confirmed' }, reads: 'array' },
  { sdk: 'memory.list', method: 'GET', path: '/admin/memory', query: { scope: 'project', status: 'confirmed', type: 'fact', limit: 50, offset: 0 }, reads: 'array' },
  { sdk: 'memory.list_all', method: 'GET', path: '/admin/memory', query: { limit: 500, offset: 0 }, reads: 'array' },
  { sdk: 'memory.list_platform', method: 'GET', path: '/admin/memory/platform', query: { status: 'confirmed', limit: 50 }, reads: 'array' },
  { sdk: 'memory.mine', method: 'GET', path: '/memory/mine', query: { limit: 20 }, reads: 'array' },
  { sdk: 'memory.explain', method: 'GET', path: '/admin/memory/{patternId}', fields: ['id', 'metadata'], reads: 'object', note: 'then one GET /admin/memory/{id} per metadata.sourceMemoryIds' },
  { sdk: 'memory.list_feedback', method: 'GET', path: '/admin/memory/{memoryId}/feedback', reads: 'array' },
  { sdk: 'memory.update', method: 'PATCH', path: '/admin/memory/{memoryId}', body: { content: 'Seed memory, edited from Python', importance: 8, type: 'fact', status: 'confirmed', scope: 'project' }, reads: 'object' },
  { sdk: 'memory.get', method: 'GET', path: '/admin/memory/{memoryId}', reads: 'object' },
  { sdk: 'memory.delete', method: 'DELETE', path: '/admin/memory/{memoryId}', reads: 'nothing' },
  { sdk: 'memory.stats', method: 'GET', path: '/admin/memory/stats', reads: 'object' },
  { sdk: 'memory.feedback', method: 'POST', path: '/memory/feedback', body: { memoryId: '{memoryId}', rating: 'positive', comment: 'Spot on' }, reads: 'nothing' },
  { sdk: 'memory.confirm', method: 'POST', path: '/admin/memory/{pendingMemoryId}/confirm', body: { status: 'rejected', comment: 'Not true' }, reads: 'object' },
  { sdk: 'memory.promote', method: 'POST', path: '/admin/memory/{memoryId}/promote', body: { targetScope: 'platform' }, reads: 'object' },
  { sdk: 'memory.consolidate', method: 'POST', path: '/admin/memory/llm-consolidate', body: { subject, windowDays: 30 }, reads: 'object' },
  {
    sdk: 'memory.consolidate (releases before 722ec09)',
    method: 'POST',
    path: '/admin/memory/consolidate',
    body: { subject, windowDays: 30 },
    reads: 'object',
    note: 'older Python releases post here (SDK-WIRE.md 6, point 7)',
  },
  { sdk: 'memory.dedup', method: 'POST', path: '/admin/memory/dedup', body: { threshold: 0.95, scanLimit: 500 }, reads: 'object' },
  { sdk: 'memory.backfill_embeddings', method: 'POST', path: '/admin/memory/embeddings/backfill', body: {}, reads: 'object' },
  { sdk: 'memory.reflect', method: 'POST', path: '/admin/memory/reflect', body: { userId: 'u-priya', dryRun: false }, reads: 'object', expectError: REFLECTION_OFF, note: 'dry_run defaults to False and is always sent' },
  { sdk: 'memory.prefetch_related', method: 'POST', path: '/admin/memory/prefetch-related', body: { seedMemoryIds: ['{memoryId}'], limit: 5 }, reads: 'array' },
  // mm.memory.consent (resources/consent.py): over the memory CRUD surface
  { sdk: 'consent.get_status', method: 'GET', path: '/admin/memory', query: { limit: 500 }, fields: ['id', 'type', 'metadata', 'created'], reads: 'array' },
  { sdk: 'consent.opt_out (drops the prior record)', method: 'DELETE', path: '/admin/memory/{memoryId}', reads: 'nothing' },
  {
    sdk: 'consent.opt_out',
    method: 'POST',
    path: '/admin/memory',
    body: {
      content: '[consent] contact:c-gym opted out',
      type: 'consent',
      scope: 'project',
      importance: 10,
      category: 'consent',
      metadata: { subject, optedOut: true, optedOutAt: '2025-06-02T00:00:00.000Z', reason: 'asked by email', recordKind: 'consent' },
    },
    fields: ['id'], reads: 'object',
  },
  {
    sdk: 'consent.opt_in',
    method: 'POST',
    path: '/admin/memory',
    body: { content: '[consent] contact:c-gym opted in', type: 'consent', scope: 'project', importance: 10, category: 'consent', metadata: { subject, optedOut: false, optedOutAt: null, reason: null, recordKind: 'consent' } },
    fields: ['id'], reads: 'object',
  },
  // mm.graph (resources/graph.py)
  { sdk: 'graph.stats', method: 'GET', path: '/admin/memory/graph/stats', reads: 'object' },
  { sdk: 'graph.list_entities', method: 'GET', path: '/admin/memory/entities', query: { type: 'org', search: 'acme', limit: 20 }, reads: 'array' },
  { sdk: 'graph.get_entity', method: 'GET', path: '/admin/memory/entities/{entityId}', reads: 'object' },
  { sdk: 'graph.list_edges', method: 'GET', path: '/admin/memory/graph/edges', query: { asOf: '2030-01-01T00:00:00.000Z', limit: 100 }, reads: 'array' },
  { sdk: 'graph.traverse', method: 'POST', path: '/admin/memory/graph/traverse', body: { entityId: '{entityId}', hops: 3, asOf: '2030-01-01T00:00:00.000Z' }, reads: 'array' },
  // mm.lattice (resources/lattice.py)
  { sdk: 'lattice.extract_patterns', method: 'POST', path: '/lattice/patterns/extract', body: { windowDays: 90, force: true, source: 'memories', subject }, reads: 'object' },
  { sdk: 'lattice.mine', method: 'POST', path: '/lattice/patterns/extract', body: { source: 'memories', windowDays: 90 }, reads: 'object' },
  { sdk: 'lattice.get_pattern', method: 'GET', path: '/lattice/patterns/{patternId}', reads: 'object', note: 'the id is not URL-encoded' },
  { sdk: 'lattice.list_patterns', method: 'GET', path: '/lattice/contacts/{contactId}/patterns', query: { activeOnly: false, limit: 10 }, fields: ['data', 'nextCursor'], reads: { key: 'data' } },
  { sdk: 'lattice.get_context', method: 'GET', path: '/lattice/contacts/{contactId}/context', query: { asOf: '2030-01-01T00:00:00.000Z', eventsLimit: 10, memoriesLimit: 10, graphHops: 2 }, reads: 'object' },
  { sdk: 'lattice.run_monitor_tick', method: 'POST', path: '/lattice/monitor/tick', body: {}, reads: 'object' },
  { sdk: 'lattice.get_monitor_status', method: 'GET', path: '/lattice/monitor/status', reads: 'object' },
  { sdk: 'lattice.predict', method: 'POST', path: '/lattice/predict', body: { subject, horizonDays: 30, limit: 10, minConfidence: 0.3 }, reads: { key: 'predictions' } },
  { sdk: 'lattice.predict_target', method: 'POST', path: '/lattice/predict', body: { subject, horizonDays: 30, target: { kind: 'event_occurrence', eventType: 'gym', lookbackDays: 365 } }, fields: ['targetPrediction'], reads: 'object' },
  { sdk: 'lattice.profile', method: 'POST', path: '/lattice/profile', body: { subject }, reads: 'object' },
  { sdk: 'lattice.get_cohort', method: 'POST', path: '/lattice/cohort', body: { subject, k: 5 }, reads: { key: 'members' } },
  { sdk: 'lattice.predict_by_cohort', method: 'POST', path: '/lattice/cohort/predict', body: { subject, cohortK: 10, predictionLimit: 5 }, reads: { key: 'predictions' } },
  { sdk: 'lattice.estimate', method: 'POST', path: '/lattice/estimate', body: { subject: patient, estimatorId: 'phenoage', persist: false }, reads: 'object' },
  { sdk: 'lattice.calibration', method: 'GET', path: '/lattice/calibration', query: { bucketCount: 10 }, reads: { key: 'buckets' } },
  // mm.context (resources/context.py)
  { sdk: 'context.build', method: 'POST', path: '/lattice/context', body: { subject, include: ['profile', 'memories'], maxTokens: 1500 }, reads: 'object' },
  { sdk: 'context.batch_build', method: 'POST', path: '/lattice/context/batch', body: { subjects: [subject, { kind: 'contact', externalId: 'sarah' }], memoryLimit: 5 }, reads: { key: 'bundles' } },
  { sdk: 'context.query_graph', method: 'POST', path: '/lattice/graph/query', body: { subjectId: '{entityId}', asOf: '2030-01-01T00:00:00.000Z', limit: 50 }, reads: { key: 'edges' } },
  // mm.learning (resources/learning.py)
  {
    sdk: 'learning.record_decision',
    method: 'POST',
    path: '/lattice/decisions',
    body: { subject, actor: 'agent:copilot', decisionType: 'outreach', informedBy: [{ memoryId: '{patternId}', refType: 'pattern', weight: 1 }], actionType: 'send_message', params: { channel: 'sms' }, idempotencyKey: 'py-decision-1' },
    fields: ['decision'], reads: 'object',
  },
  { sdk: 'learning.record_outcome', method: 'POST', path: '/lattice/outcomes', body: { decisionId: '{decisionId}', result: 'partial', outcomeType: 'engagement', reward: 1, idempotencyKey: 'py-outcome-1' }, reads: { key: 'updates' } },
  { sdk: 'learning.get_outcomes', method: 'GET', path: '/lattice/outcomes', query: { subjectKind: 'contact', subjectExternalId: 'c-gym', limit: 50 }, reads: { key: 'outcomes' } },
  { sdk: 'learning.get_effectiveness', method: 'GET', path: '/lattice/effectiveness', query: { groupBy: 'pattern_kind' }, reads: { key: 'rows' } },
  // mm.behaviors (resources/behaviors.py)
  { sdk: 'behaviors.discover', method: 'POST', path: '/lattice/discover', body: { minClusterSize: 2 }, reads: { key: 'behaviors' } },
  // mm.events (resources/events.py); subscribe() polls the same route
  { sdk: 'events.poll', method: 'GET', path: '/memory-events', query: { since: '2025-01-01T00:00:00.000Z', limit: 50, eventTypes: 'cart.abandoned' }, reads: 'array' },
  { sdk: 'events.emit', method: 'POST', path: '/lattice/events/emit', body: { eventType: 'cart.abandoned', subject, severity: 'info', payloadJson: '{"cartValue": 12.5}' }, reads: 'object' },
  // mm.alerts (resources/alerts.py)
  { sdk: 'alerts.list', method: 'GET', path: '/memory-alerts', reads: 'array' },
  { sdk: 'alerts.get', method: 'GET', path: '/memory-alerts/{alertId}', reads: 'object' },
  {
    sdk: 'alerts.create',
    method: 'POST',
    path: '/memory-alerts',
    body: {
      name: 'Churn risk to memory',
      trigger: { kind: 'engine-event', eventTypes: ['risk.fired'] },
      notify: [{ kind: 'memory', writeAs: { content: 'Risk fired: {{subject.kind}}/{{subject.externalId}}' } }],
    },
    reads: 'object',
    note: 'writeAs.scope is optional in both clients',
  },
  { sdk: 'alerts.update', method: 'PATCH', path: '/memory-alerts/{alertId}', body: { trigger: { kind: 'pattern-emerged', patternKind: 'recurring_event' } }, reads: 'object' },
  { sdk: 'alerts.delete', method: 'DELETE', path: '/memory-alerts/{alertId}', reads: 'nothing' },
  { sdk: 'alerts.enable', method: 'PATCH', path: '/memory-alerts/{alertId}', body: { enabled: true }, reads: 'object' },
  { sdk: 'alerts.disable', method: 'PATCH', path: '/memory-alerts/{alertId}', body: { enabled: false }, reads: 'object' },
  { sdk: 'alerts.list_fires', method: 'GET', path: '/memory-alerts/{alertId}/fires', reads: 'array' },
  // mm.compliance (resources/compliance.py)
  { sdk: 'compliance.export_subject', method: 'POST', path: '/memory-compliance/export', body: { subject }, reads: 'object' },
  { sdk: 'compliance.hard_delete_subject', method: 'POST', path: '/memory-compliance/hard-delete', body: { subject: { kind: 'contact', externalId: 'c-erase' }, reason: 'GDPR Art. 17 case 2025-06-02-B' }, reads: 'object' },
  { sdk: 'compliance.list_audit_events', method: 'GET', path: '/memory-compliance/audit', query: { actor: 'key', limit: 10 }, reads: 'array' },
  { sdk: 'compliance.list_packs', method: 'GET', path: '/memory-compliance/packs', reads: 'array' },
  { sdk: 'compliance.list_project_packs', method: 'GET', path: '/memory-compliance-packs', reads: 'array' },
  { sdk: 'compliance.upsert_project_pack', method: 'POST', path: '/memory-compliance-packs', body: { packId: '@thinkfleet/pack-healthcare', enabled: true, config: { retentionDays: 365 } }, reads: 'object' },
  { sdk: 'compliance.remove_project_pack', method: 'DELETE', path: '/memory-compliance-packs/%40thinkfleet%2Fpack-healthcare', reads: 'nothing', note: "quote(pack_id, safe='')" },
  // mm.health (resources/health.py)
  {
    sdk: 'health.record_biomarker',
    method: 'POST',
    path: '/admin/memory',
    body: { content: 'ldl = 131 mg/dL', type: 'fact', scope: 'project', category: 'health', source: 'sdk:health', metadata: { subject: patient, health: { biomarker: 'ldl', value: 131, unit: 'mg/dL' } } },
    reads: 'object',
  },
  {
    sdk: 'health.record_demographics',
    method: 'POST',
    path: '/admin/memory',
    body: { content: 'Demographics update', type: 'fact', scope: 'project', category: 'health', source: 'sdk:health', metadata: { subject: patient, demographic: { ageYears: 55 } } },
    reads: 'object',
  },
  {
    sdk: 'health.record_condition',
    method: 'POST',
    path: '/admin/memory',
    body: { content: 'Diagnosis E11', type: 'fact', scope: 'project', category: 'health', source: 'sdk:health', metadata: { subject: patient, condition: { icd10: 'E11' } } },
    reads: 'object',
  },
  { sdk: 'health.get_profile', method: 'POST', path: '/lattice/health/profile', body: { subject: patient }, reads: 'object' },
  { sdk: 'health.get_cohort_risk', method: 'POST', path: '/lattice/health/cohort-risk', body: { subject: patient }, reads: { key: 'risks' } },
  // mm.financial (resources/financial.py)
  {
    sdk: 'financial.ingest_price',
    method: 'POST',
    path: '/admin/memory',
    body: { content: 'MSFT close 415.1', type: 'fact', scope: 'project', category: 'financial', source: 'sdk:financial', metadata: { price: { ticker: 'MSFT', close: 415.1 } } },
    reads: 'object',
    note: 'ingest_prices makes this call once per bar',
  },
  {
    sdk: 'financial.ingest_fundamentals',
    method: 'POST',
    path: '/admin/memory',
    body: { content: 'Fundamentals MSFT', type: 'fact', scope: 'project', category: 'financial', source: 'sdk:financial', metadata: { fundamental: { ticker: 'MSFT', eps: 11.8 } } },
    reads: 'object',
  },
  {
    sdk: 'financial.ingest_holding',
    method: 'POST',
    path: '/admin/memory',
    body: { content: 'Holding 10 MSFT', type: 'fact', scope: 'project', category: 'financial', source: 'sdk:financial', metadata: { subject: portfolio, holding: { ticker: 'MSFT', shares: 10 } } },
    reads: 'object',
  },
  {
    sdk: 'financial.ingest_news',
    method: 'POST',
    path: '/admin/memory',
    body: { content: 'News [MSFT,AAPL]: Cloud spending rises', type: 'fact', scope: 'project', category: 'financial', source: 'sdk:financial', metadata: { newsEvent: { tickers: ['MSFT', 'AAPL'], headline: 'Cloud spending rises' } } },
    reads: 'object',
  },
  { sdk: 'financial.get_profile', method: 'POST', path: '/lattice/financial/profile', body: { subject: ticker }, reads: 'object', fields: ['subject', 'indicators', 'fundamentals', 'positions', 'unpricedHoldings', 'disclaimer', 'generatedAt'] },
  { sdk: 'financial.predict', method: 'POST', path: '/lattice/financial/predict', body: { subject: ticker }, reads: 'object', fields: ['signals', 'strategy', 'strategyReliability', 'resolvedSample', 'disclaimer'] },
  { sdk: 'financial.reconcile', method: 'POST', path: '/lattice/financial/reconcile', body: {}, reads: 'object', fields: ['scored', 'hits', 'misses', 'stillPending'] },
  { sdk: 'financial.get_calibration', method: 'POST', path: '/lattice/financial/calibration', body: { strategy: 'momentum' }, reads: 'object', fields: ['buckets', 'strategy', 'strategyReliability', 'totalResolved'] },
  // mm.typed (resources/typed.py)
  { sdk: 'typed.register_attribute', method: 'POST', path: '/memory-typed/attributes', body: { attributeKey: 'resting_hr', dataType: 'numeric', unit: 'bpm', minValid: 20, maxValid: 250 }, reads: 'object' },
  { sdk: 'typed.list_attributes', method: 'GET', path: '/memory-typed/attributes', reads: 'array' },
  { sdk: 'typed.ingest', method: 'POST', path: '/memory-typed/observations', body: observations('py-bureau'), reads: 'object' },
  { sdk: 'typed.enqueue', method: 'POST', path: '/memory-typed/observations/enqueue', body: observations('py-queue'), reads: 'object' },
  { sdk: 'typed.query_observations', method: 'GET', path: '/memory-typed/observations', query: { subjectKind: 'contact', subjectExternalId: 'c-gym', status: 'quarantined', limit: 10 }, reads: 'array' },
  { sdk: 'typed.accumulator', method: 'GET', path: '/memory-typed/accumulator', query: { subjectKind: 'contact', subjectExternalId: 'c-gym', attributeKey: 'credit_score' }, reads: 'object' },
  // mm.brains (resources/brains.py); list() walks `next` as `cursor`
  { sdk: 'brains.create', method: 'POST', path: '/brains', body: { externalId: 'sec-edgar-financials-py', name: 'SEC EDGAR Financials', domain: 'finance' }, reads: 'object' },
  {
    sdk: 'brains.create_from_project',
    method: 'POST',
    path: '/brains',
    body: { externalId: 'support-playbook-py', name: 'Support Playbook', version: '1.0.0', visibility: 'PRIVATE', card: { provenance: [], coverage: {} } },
    reads: 'object',
    note: 'domain is left out when not given',
  },
  { sdk: 'brains.list', method: 'GET', path: '/brains', fields: ['data', 'next', 'previous'], reads: { key: 'data' } },
  { sdk: 'brains.get', method: 'GET', path: '/brains/{brainId}', reads: 'object' },
  { sdk: 'brains.update', method: 'PATCH', path: '/brains/{brainId}', body: { name: 'SEC EDGAR Financials (2026)', visibility: 'UNLISTED' }, reads: 'object' },
  { sdk: 'brains.delete', method: 'DELETE', path: '/brains/{brainId}', reads: 'nothing' },
];

export const CALLS: readonly ClientCall[] = [...ts.map((c) => ({ client: 'ts' as const, ...c })), ...py.map((c) => ({ client: 'py' as const, ...c }))];
