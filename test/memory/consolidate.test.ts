// POST /admin/memory/llm-consolidate through the API: the heuristic path (no gateway) turning a
// slot's statements into one observation, growing its provenance, superseding it when what holds
// changes, dryRun; the model path against a local OpenAI-compatible gateway (proposals that cite
// nothing given or are too short skipped), the heuristic path for a project without the
// entitlement; validation, permission and isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatText, startGateway, type ChatBody, type GatewayServer } from '../helpers/gateway-server.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const DAY = 86_400_000;
const ana = { kind: 'user', externalId: 'ana' };
type Project = { projectId: string; apiKey: string };
type Observation = { id: string; content: string; status: string; supersededById: string | null; sourceMemoryIds: string[]; metadata: Record<string, unknown> };

function helpers(get: () => Harness) {
  const remember = async (p: Project, content: string, daysAgo: number, metadata?: Record<string, unknown>) => {
    const res = await get().call('POST', p.projectId, '/admin/memory', {
      body: { content, type: 'fact', subject: ana, validFrom: new Date(Date.now() - daysAgo * DAY).toISOString(), ...(metadata ? { metadata } : {}) },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  const consolidate = async (p: Project, body: Record<string, unknown>, status = 200) => {
    const res = await get().call('POST', p.projectId, '/admin/memory/llm-consolidate', { body });
    expect(res.statusCode, res.body).toBe(status);
    return res.json();
  };
  const observations = async (p: Project): Promise<Observation[]> => {
    const { rows } = await get().db.query<{ id: string }>(`SELECT id FROM memories WHERE project_id = $1 AND type = 'observation' ORDER BY created_at, id`, [p.projectId]);
    return Promise.all(rows.map(async (r) => (await get().call('GET', p.projectId, `/admin/memory/${r.id}`)).json()));
  };
  return { remember, consolidate, observations };
}

describe('POST /admin/memory/llm-consolidate, heuristic path', () => {
  let h: Harness;
  let p: Project;
  const { remember, consolidate, observations } = helpers(() => h);

  beforeAll(async () => {
    h = await createHarness();
    p = await h.project();
  });
  afterAll(async () => h?.close());

  it("turns a slot's statements into one observation of what holds now, and does nothing twice", async () => {
    const enterprise = await remember(p, 'Ana is on the Enterprise plan', 10, { slot: 'plan' });
    const pro = await remember(p, 'Ana downgraded to the Pro plan', 2, { slot: 'plan' });
    await remember(p, 'Ana likes green tea', 1);
    const first = await consolidate(p, { subject: ana });
    expect(first).toMatchObject({ subjectsConsidered: 1, observationsCreated: 1, observationsUpdated: 0, observationsSuperseded: 0, method: 'heuristic', dryRun: false, subjectsCapped: false, skipped: [] });
    expect(first.methodReason).toContain('MODEL_GATEWAY_URL');
    const [observation] = await observations(p);
    expect(observation).toMatchObject({ content: 'Ana downgraded to the Pro plan', status: 'confirmed', metadata: { consolidated: true, topic: 'plan', method: 'heuristic' } });
    expect([...observation!.sourceMemoryIds].sort()).toEqual([enterprise, pro].sort());
    expect(await consolidate(p, { subject: ana })).toMatchObject({ subjectsConsidered: 1, observationsCreated: 0, observationsUpdated: 0, observationsSuperseded: 0 });
  });

  it('grows the provenance when an older statement arrives, and supersedes the observation when what holds changes', async () => {
    const starter = await remember(p, 'Ana started on the Starter plan', 20, { slot: 'plan' });
    expect(await consolidate(p, {})).toMatchObject({ subjectsConsidered: 1, observationsCreated: 0, observationsUpdated: 1, observationsSuperseded: 0 });
    const [grown] = await observations(p);
    expect(grown!.sourceMemoryIds).toContain(starter);

    // dryRun counts and changes nothing.
    await remember(p, 'Ana upgraded to the Business plan', 0, { slot: 'plan' });
    expect(await consolidate(p, { subject: ana, dryRun: true })).toMatchObject({ observationsCreated: 1, observationsSuperseded: 1, dryRun: true });
    expect(await observations(p)).toHaveLength(1);

    expect(await consolidate(p, { subject: ana })).toMatchObject({ observationsCreated: 1, observationsUpdated: 0, observationsSuperseded: 1 });
    const [old, current] = await observations(p);
    expect(current).toMatchObject({ content: 'Ana upgraded to the Business plan', status: 'confirmed', metadata: { topic: 'plan' } });
    expect(old).toMatchObject({ id: grown!.id, status: 'superseded', supersededById: current!.id });
  });

  it('reads the memories written within the window, by when they were written, not when they became true', async () => {
    const q = await h.project();
    const enterprise = await remember(q, 'Ana is on the Enterprise plan', 10, { slot: 'plan' });
    await remember(q, 'Ana downgraded to the Pro plan', 2, { slot: 'plan' });
    // Written 40 days ago (as an import would have): outside a 30-day window, so one statement is left.
    await h.db.query(`UPDATE memories SET created_at = now() - interval '40 days' WHERE project_id = $1 AND id = $2`, [q.projectId, enterprise]);
    expect(await consolidate(q, { dryRun: true })).toMatchObject({ subjectsConsidered: 1, observationsCreated: 0 });
    // Both were true before yesterday, but a window of 60 days holds both writes.
    expect(await consolidate(q, { windowDays: 60 })).toMatchObject({ subjectsConsidered: 1, observationsCreated: 1 });
  });

  it('refuses bad input and READ keys, and keeps projects apart', async () => {
    for (const body of [{ windowDays: 0 }, { windowDays: 366 }, { subject: { kind: 'user' } }, { dryRun: 'yes' }, { colour: 'red' }]) {
      const res = await h.call('POST', p.projectId, '/admin/memory/llm-consolidate', { body });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
    const reader = await h.key(p.projectId, ['READ_MEMORY']);
    expect((await h.call('POST', p.projectId, '/admin/memory/llm-consolidate', { apiKey: reader, body: {} })).statusCode).toBe(403);
    const other = await h.project();
    expect((await h.call('POST', p.projectId, '/admin/memory/llm-consolidate', { apiKey: other.apiKey, body: {} })).statusCode).toBe(404);
    expect(await consolidate(other, { subject: ana })).toMatchObject({ subjectsConsidered: 0, observationsCreated: 0 });
    expect(await observations(other)).toEqual([]);
    expect((await observations(p)).filter((o) => o.status === 'confirmed')).toHaveLength(1);
  });
});

describe('POST /admin/memory/llm-consolidate, model path', () => {
  let gateway: GatewayServer;
  let h: Harness;
  const { remember, consolidate, observations } = helpers(() => h);
  /** The model: the plan from the memories it was given, one observation citing nothing given, one too short. */
  const model = (body: ChatBody) => {
    const ids = [...chatText(body).matchAll(/\[(mem_\w+)\]/g)].map((m) => m[1]!);
    return {
      observations: [
        { topic: 'Plan', content: 'Ana moved from the Enterprise plan down to Pro.', sourceIds: [...ids, 'mem_not_given'] },
        { topic: 'travel', content: 'Ana is planning a trip to Kyoto in April.', sourceIds: ['mem_not_given'] },
        { topic: 'diet', content: 'Tea.', sourceIds: ids.slice(0, 1) },
      ],
    };
  };

  beforeAll(async () => {
    gateway = await startGateway();
    gateway.chat = model;
    h = await createHarness({ env: { MODEL_GATEWAY_URL: gateway.url, MODEL_GATEWAY_RETRY_BASE_MS: '5' } });
  });
  afterAll(async () => {
    await h?.close();
    await gateway?.close();
  });

  it('saves the observations the model proposes with their cited sources, and skips what cites nothing given or is too short', async () => {
    const p = await h.project();
    const enterprise = await remember(p, 'Ana is on the Enterprise plan', 10);
    const pro = await remember(p, 'Ana downgraded to the Pro plan', 2);
    const result = await consolidate(p, { subject: ana });
    expect(result).toMatchObject({ subjectsConsidered: 1, observationsCreated: 1, observationsSuperseded: 0, method: 'model', methodReason: null });
    expect(result.skipped.map((s: { reason: string }) => s.reason).sort()).toEqual(['cites none of the memories it was given', 'too short to be an observation']);
    const [observation] = await observations(p);
    expect(observation).toMatchObject({ content: 'Ana moved from the Enterprise plan down to Pro.', metadata: { consolidated: true, topic: 'plan', method: 'model' } });
    expect([...observation!.sourceMemoryIds].sort()).toEqual([enterprise, pro].sort());
    // The model was shown the memories and told about no existing observation.
    const prompt = chatText(gateway.requests.at(-1)!.body as ChatBody);
    expect(prompt).toContain(`[${pro}]`);
    expect(prompt).toContain('Existing observations:\n(none)');
    // Again: the same sentence and sources, nothing to do; the model is told about the observation.
    expect(await consolidate(p, { subject: ana })).toMatchObject({ observationsCreated: 0, observationsUpdated: 0, observationsSuperseded: 0 });
    expect(chatText(gateway.requests.at(-1)!.body as ChatBody)).toContain('- plan: Ana moved from the Enterprise plan down to Pro.');
  });

  it('takes the heuristic path for a project without the FEATURE_MEMORY_INTELLIGENCE entitlement, and says why', async () => {
    const free = await h.project({ plan: 'free' });
    const calls = gateway.requests.length;
    await remember(free, 'Ana is on the Enterprise plan', 10, { slot: 'plan' });
    await remember(free, 'Ana downgraded to the Pro plan', 2, { slot: 'plan' });
    const result = await consolidate(free, { subject: ana });
    expect(result).toMatchObject({ method: 'heuristic', observationsCreated: 1 });
    expect(result.methodReason).toContain('FEATURE_MEMORY_INTELLIGENCE');
    expect(gateway.requests.length).toBe(calls);
  });
});
