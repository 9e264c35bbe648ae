// Reflection through the API against the local gateway: insights saved with provenance, the ones
// that cite nothing given, repeat an insight or pass maxInsights skipped with the reason, no
// duplicates on a second run, dryRun, and the clear refusals (flag off, no gateway, gateway down,
// entitlement missing), validation and isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { chatText, startGateway, type ChatBody, type GatewayServer } from '../helpers/gateway-server.js';

describe('POST /admin/memory/reflect', () => {
  let gateway: GatewayServer;
  let h: Harness;
  const ids = (body: ChatBody) => [...chatText(body).matchAll(/\[(mem_\w+)\]/g)].map((m) => m[1]!);
  /** The model: a habit from the first two memories, one citing a memory it was not given, and a restatement. */
  const model = (body: ChatBody) => {
    const [a, b] = ids(body);
    return {
      insights: [
        { content: 'Maria keeps her mornings for exercise before work.', sourceIds: [a, b, 'mem_not_given'], confidence: 0.8 },
        { content: 'Maria is planning a career change into teaching.', sourceIds: ['mem_not_given'], confidence: 0.6 },
        { content: 'Maria keeps her mornings for exercise before her work.', sourceIds: [b], confidence: 0.5 },
      ],
    };
  };
  const reflect = (projectId: string, body: Record<string, unknown>) => h.call('POST', projectId, '/admin/memory/reflect', { body });
  const remember = async (projectId: string, content: string) =>
    expect((await h.call('POST', projectId, '/admin/memory', { body: { content, type: 'fact', subject: { kind: 'user', externalId: 'maria' } } })).statusCode).toBe(201);

  beforeAll(async () => {
    gateway = await startGateway();
    gateway.chat = model;
    h = await createHarness({ env: { MODEL_GATEWAY_URL: gateway.url, MEMORY_REFLECTION_ENABLED: 'true', MODEL_GATEWAY_RETRY_BASE_MS: '5' } });
  });
  afterAll(async () => {
    await h?.close();
    await gateway?.close();
  });

  it('saves insights with provenance, skips what cites nothing or repeats, and never duplicates on a second run', async () => {
    const p = await h.project();
    await remember(p.projectId, 'Maria runs 5 km every morning at 6.');
    await remember(p.projectId, 'Maria starts work at 9 and never books early meetings.');
    await remember(p.projectId, 'Maria swims on Saturday mornings.');
    const dry = await reflect(p.projectId, { userId: 'maria', dryRun: true });
    expect(dry.statusCode, dry.body).toBe(200);
    expect(dry.json()).toMatchObject({ dryRun: true, sourcesConsidered: 3, saved: [{ id: null }], insights: [{ id: '' }] });
    expect((await h.call('GET', p.projectId, '/admin/memory?type=insight')).json()).toEqual([]);

    const first = (await reflect(p.projectId, { userId: 'maria' })).json();
    expect(first.saved).toHaveLength(1);
    const [insight] = first.saved;
    expect(insight.id).toMatch(/^mem_/);
    expect(insight.sourceMemoryIds).toHaveLength(2);
    // The clients read the same list as `insights`, with sourceIds.
    expect(first.insights).toEqual([{ id: insight.id, content: insight.content, sourceIds: insight.sourceMemoryIds, confidence: insight.confidence }]);
    expect(first.skipped.map((s: { reason: string }) => s.reason)).toEqual(['cites none of the memories it was given', 'repeats another insight of this run']);
    expect(first.usage.totalTokens).toBeGreaterThan(0);
    const stored = (await h.call('GET', p.projectId, `/admin/memory/${insight.id}`)).json();
    expect(stored).toMatchObject({ type: 'insight', source: 'reflection', sourceMemoryIds: insight.sourceMemoryIds, subject: { kind: 'user', externalId: 'maria' } });
    // The gateway was asked for structured output and shown the memories by id.
    const asked = gateway.requests.at(-1)!.body as ChatBody;
    expect(asked.response_format?.json_schema?.name).toBe('insights');
    expect(ids(asked)).toHaveLength(3);

    const second = (await reflect(p.projectId, { userId: 'maria' })).json();
    expect(second.saved).toEqual([]);
    expect(second.skipped[0].reason).toBe(`repeats the existing insight ${insight.id}`);
    expect(second.existingInsights).toBe(1);
    expect(chatText(gateway.requests.at(-1)!.body as ChatBody)).toContain(insight.content);
    expect((await h.call('GET', p.projectId, '/admin/memory?type=insight')).json()).toHaveLength(1);
  });

  it('clamps its bounds, needs two memories, validates, and reads only its own project', async () => {
    const p = await h.project();
    expect((await reflect(p.projectId, { userId: 'maria', dryRun: 'yes' })).statusCode).toBe(400);
    expect((await reflect(p.projectId, { userId: '' })).statusCode).toBe(400);
    // Another project's memories about the same user id are not this project's, nor its project-wide ones.
    const other = await h.project();
    await remember(other.projectId, 'Maria runs every morning.');
    await remember(other.projectId, 'Maria works from 9.');
    expect((await reflect(p.projectId, {})).json()).toMatchObject({ userId: null, sourcesConsidered: 0, insights: [] });
    const none = (await reflect(p.projectId, { userId: 'maria', maxSources: 0, maxInsights: 99 })).json();
    expect(none).toMatchObject({ sourcesConsidered: 0, saved: [], note: expect.stringContaining('fewer than two') });
  });

  it('reflects over the whole project without userId: every subject is read, the insight is about no one subject', async () => {
    const p = await h.project();
    await remember(p.projectId, 'Maria runs 5 km every morning at 6.');
    expect((await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Tomas runs before work on weekdays.', type: 'fact', subject: { kind: 'user', externalId: 'tomas' } } })).statusCode).toBe(201);
    const res = await reflect(p.projectId, {});
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ userId: null, sourcesConsidered: 2 });
    expect(body.insights).toHaveLength(1);
    const stored = (await h.call('GET', p.projectId, `/admin/memory/${body.insights[0].id}`)).json();
    expect(stored).toMatchObject({ type: 'insight', source: 'reflection', subject: null });
    expect(chatText(gateway.requests.at(-1)!.body as ChatBody)).toContain('one project');
  });

  it('answers 503 when the gateway fails after its retries, and saves nothing', async () => {
    const p = await h.project();
    await remember(p.projectId, 'Maria runs 5 km every morning at 6.');
    await remember(p.projectId, 'Maria starts work at 9.');
    gateway.failNext(3, 502);
    const res = await reflect(p.projectId, { userId: 'maria' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('502') });
    expect((await h.call('GET', p.projectId, '/admin/memory?type=insight')).json()).toEqual([]);
  });

  it("meters the gateway's tokens to the project and refuses a project past its quota", async () => {
    const p = await h.project();
    await h.apis.tenancy.setPlan(p.projectId, 'growth', { 'model-tokens': 1 });
    await remember(p.projectId, 'Maria runs 5 km every morning at 6.');
    await remember(p.projectId, 'Maria starts work at 9.');
    const first = (await reflect(p.projectId, { userId: 'maria', dryRun: true })).json();
    await expect.poll(() => h.apis.tenancy.usage(p.projectId, 'model-tokens'), { timeout: 60_000, interval: 20 }).toBe(first.usage.totalTokens);
    const calls = gateway.requests.length;
    const refused = await reflect(p.projectId, { userId: 'maria', dryRun: true });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'QUOTA_EXCEEDED', message: expect.stringContaining('model-tokens') });
    expect(gateway.requests.length).toBe(calls);
  });

  it('needs the FEATURE_MEMORY_INTELLIGENCE entitlement', async () => {
    const free = await h.project({ plan: 'free' });
    const res = await reflect(free.projectId, { userId: 'maria' });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'FEATURE_DISABLED' });
  });

  it('refuses clearly with the flag off, or without a gateway', async () => {
    for (const [env, setting] of [
      [{ MODEL_GATEWAY_URL: gateway.url }, 'MEMORY_REFLECTION_ENABLED'],
      [{ MEMORY_REFLECTION_ENABLED: 'true' }, 'MODEL_GATEWAY_URL'],
    ] as const) {
      const other = await createHarness({ env });
      try {
        const p = await other.project();
        const res = await other.call('POST', p.projectId, '/admin/memory/reflect', { body: { userId: 'maria' } });
        expect(res.statusCode).toBe(503);
        expect(res.json()).toMatchObject({ code: 'NOT_CONFIGURED', message: expect.stringContaining(setting) });
      } finally {
        await other.close();
      }
    }
  });
});
