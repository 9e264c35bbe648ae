// The model-based observe pass against the local gateway: its facts join the heuristic ones in the
// same saved set (source observe:model), a fact the heuristic already has is not added twice, it
// runs only with the flag, a gateway and the entitlement, its tokens are metered, and any gateway
// failure (down, garbage) leaves the write to the heuristic result.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatText, startGateway, type ChatBody, type GatewayServer } from '../helpers/gateway-server.js';
import { createHarness, type Harness } from '../helpers/harness.js';

/** What the heuristic alone saves of the narrative: two statements. */
const HEURISTIC_ONLY = ['observe', 'observe'];
const NARRATIVE = "We spent the weekend at my sister's place, and she's finally letting me borrow her kayak for the whole summer. I live in Leeds.";

describe('model-based observe', () => {
  let gateway: GatewayServer;
  let h: Harness;
  const observe = (projectId: string, text = NARRATIVE) => h.call('POST', projectId, '/memory/observe', { body: { text, role: 'user', userId: 'maria' } });

  beforeAll(async () => {
    gateway = await startGateway();
    gateway.chat = (body: ChatBody) =>
      chatText(body).includes('kayak')
        ? { facts: [{ content: 'My sister is lending me her kayak for the summer', type: 'fact', importance: 6 }, { content: 'I live in Leeds.', type: 'fact', importance: 7 }] }
        : { facts: [] };
    h = await createHarness({ env: { MODEL_GATEWAY_URL: gateway.url, MEMORY_LLM_MEMORY_EXTRACTION_ENABLED: 'true', MODEL_GATEWAY_RETRY_BASE_MS: '5' } });
  });
  afterAll(async () => {
    await h?.close();
    await gateway?.close();
  });

  it("adds the model's facts to the saved set, not twice what the heuristic found, and meters the tokens", async () => {
    const p = await h.project();
    const res = await observe(p.projectId);
    expect(res.statusCode, res.body).toBeLessThan(300);
    const saved = res.json().saved as { content: string; source: string }[];
    expect(saved).toContainEqual(expect.objectContaining({ content: 'My sister is lending me her kayak for the summer.', source: 'observe:model' }));
    // "I live in Leeds" came from the heuristic; the model's copy was dropped.
    expect(saved.filter((m) => /leeds/i.test(m.content))).toEqual([expect.objectContaining({ source: 'observe' })]);
    await expect.poll(() => h.apis.tenancy.usage(p.projectId, 'model-tokens'), { timeout: 60_000, interval: 20 }).toBeGreaterThan(0);
  });

  it('never fails the write: a gateway that is down or answers garbage leaves the heuristic result', async () => {
    const p = await h.project();
    gateway.failNext(3, 500);
    const down = await observe(p.projectId);
    expect(down.statusCode).toBeLessThan(300);
    expect(down.json().saved.map((m: { source: string }) => m.source)).toEqual(HEURISTIC_ONLY);
    const q = await h.project();
    const original = gateway.chat;
    gateway.chat = () => 'I am not JSON at all';
    try {
      const garbage = await observe(q.projectId);
      expect(garbage.statusCode).toBeLessThan(300);
      expect(garbage.json().saved.map((m: { source: string }) => m.source)).toEqual(HEURISTIC_ONLY);
    } finally {
      gateway.chat = original;
    }
  });

  it('runs only with the entitlement (no call for a free project) and only with the flag', async () => {
    const free = await h.project({ plan: 'free' });
    const calls = gateway.requests.length;
    const res = await observe(free.projectId);
    expect(res.json().saved.map((m: { source: string }) => m.source)).toEqual(HEURISTIC_ONLY);
    expect(gateway.requests.length).toBe(calls);
    const off = await createHarness({ env: { MODEL_GATEWAY_URL: gateway.url } });
    try {
      const p = await off.project();
      const before = gateway.requests.length;
      const plain = await off.call('POST', p.projectId, '/memory/observe', { body: { text: NARRATIVE, role: 'user', userId: 'maria' } });
      expect(plain.json().saved.map((m: { source: string }) => m.source)).toEqual(HEURISTIC_ONLY);
      expect(gateway.requests.length).toBe(before);
    } finally {
      await off.close();
    }
  });
});
