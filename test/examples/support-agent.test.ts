// The public example application python/support-agent/main.py of ThinkfleetAI/memmesh-examples,
// end to end (issue 35, deliverable 9): "a support bot that remembers every customer across
// sessions, recalls history on each ticket ... and self-corrects when facts change" (the examples'
// README). The Python client (memmesh) is not installed here, so this makes the calls the example
// makes through it, in the same order and shapes (src/memmesh/resources/memory.py), over real HTTP
// to a listening Lattice, with the Python client's headers (test/examples/client.ts):
//   mm.memory.observe(text, subject=cust), four times: POST /admin/memory { content, type: 'event',
//     scope: 'project', importance: 5, source: 'admin_created', metadata: { subject } };
//   mm.memory.search("what plan is Jane on", limit=5): POST /admin/memory/search { query, limit: 5 },
//     printing each hit's content;
//   mm.memory.reflect(max_insights=2, dry_run=True): POST /admin/memory/reflect { maxInsights: 2,
//     dryRun: true }, printing each insight as "content  (confidence as a percentage)".
// Reflection asks a model: the local OpenAI-compatible stand-in (test/helpers/gateway-server.ts)
// plays it, answering from the memories it is shown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatText, startGateway, type ChatBody, type GatewayServer } from '../helpers/gateway-server.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { exampleClient, listen, type ExampleClient } from './client.js';

interface MemoryItem {
  id: string;
  content: string;
  type: string;
  status: string;
  subject: { kind: string; externalId: string } | null;
  metadata: Record<string, unknown> | null;
  validFrom: string;
  validTo: string | null;
  supersededById: string | null;
}

const CUSTOMER = { kind: 'contact', externalId: 'acme-jane' };
const ENTERPRISE = 'Jane at Acme is on the Enterprise plan.';
const CSV = 'Jane reported the CSV export is slow on big accounts.';
const SLACK = 'Jane prefers Slack over email for updates.';
const PRO = 'Acme downgraded to the Pro plan this month.';

describe('example: python/support-agent', () => {
  let h: Harness;
  let model: GatewayServer;
  let mm: ExampleClient;
  let project: { projectId: string; apiKey: string };
  const saved = new Map<string, MemoryItem>();

  /** The Python client's memory.observe(content, subject=...): its defaults, the subject in metadata. */
  const observe = (content: string) =>
    mm.post<MemoryItem>('/admin/memory', { content, type: 'event', scope: 'project', importance: 5, source: 'admin_created', metadata: { subject: CUSTOMER } });
  /** memory.search(query, limit=5): the hits' contents, as the example prints them. */
  const recall = async () => (await mm.post<{ content: string }[]>('/admin/memory/search', { query: 'what plan is Jane on', limit: 5 })).map((hit) => hit.content);

  beforeAll(async () => {
    model = await startGateway();
    // The model reads the memories it is given ("[mem_...] content" lines) and draws three
    // conclusions from them, each citing the memories it rests on.
    model.chat = (body: ChatBody) => {
      const lines = [...chatText(body).matchAll(/\[(mem_\w+)\][^\n]*/g)].map((m) => ({ id: m[1]!, text: m[0] }));
      const about = (word: RegExp) => lines.filter((l) => word.test(l.text)).map((l) => l.id);
      return {
        insights: [
          { content: 'Acme is a cost-conscious account: it moved down to Pro and is sensitive to slow exports.', sourceIds: [...about(/Pro plan/), ...about(/CSV/)], confidence: 0.72 },
          { content: 'Jane should get ticket updates on Slack rather than by email.', sourceIds: about(/Slack/), confidence: 0.9 },
          { content: 'Jane works with large accounts.', sourceIds: about(/big accounts/), confidence: 0.4 },
        ],
      };
    };
    h = await createHarness({ env: { MODEL_GATEWAY_URL: model.url, MEMORY_REFLECTION_ENABLED: 'true', MODEL_GATEWAY_RETRY_BASE_MS: '5' } });
    project = await h.project();
    mm = exampleClient(await listen(h), project, 'python');
  });
  afterAll(async () => {
    await h?.close();
    await model?.close();
  });

  it('remembers the interactions about the customer, and the plan change retires the old plan', async () => {
    for (const content of [ENTERPRISE, CSV, SLACK, PRO]) {
      const item = await observe(content);
      // What the client gets back: the memory, about the customer named in metadata.subject.
      expect(item).toMatchObject({ content, type: 'event', status: 'confirmed', subject: CUSTOMER });
      saved.set(content, item);
    }
    // Belief revision, server-side: the downgrade superseded the Enterprise plan (kept as history,
    // valid until the downgrade), and nothing else was touched.
    const enterprise = await mm.get<MemoryItem>(`/admin/memory/${saved.get(ENTERPRISE)!.id}`);
    const pro = saved.get(PRO)!;
    expect(enterprise).toMatchObject({ status: 'superseded', supersededById: pro.id, validTo: pro.validFrom });
    expect(enterprise.metadata).toMatchObject({ slot: 'plan', subject: CUSTOMER });
    expect(pro.metadata).toMatchObject({ slot: 'plan', subject: CUSTOMER });
    for (const content of [CSV, SLACK, PRO]) expect((await mm.get<MemoryItem>(`/admin/memory/${saved.get(content)!.id}`)).status).toBe('confirmed');
    // What the customer's memories are now, newest first: the current plan, not the stale one.
    const live = await mm.get<MemoryItem[]>('/admin/memory', { subjectKind: CUSTOMER.kind, subjectExternalId: CUSTOMER.externalId });
    expect(live.map((m) => m.content)).toEqual([PRO, SLACK, CSV]);
  });

  it('recalls the current plan first on a new ticket, as soon as the notes are written and once they are embedded', async () => {
    // Right after the writes, as the example runs (a memory may still wait for its embedding).
    const first = await recall();
    expect(first[0]).toBe(PRO);
    expect(first).not.toContain(ENTERPRISE);
    // The rest of the customer's history is recalled with it.
    expect(first).toEqual(expect.arrayContaining([CSV, SLACK]));

    // The same ticket once every note is embedded (the client's backfill_embeddings call, not the
    // example's: it only makes sure the search below ranks by meaning as well as by words).
    for (let pass = 0; pass < 100; pass++) {
      const progress = await mm.post<{ remaining: number }>('/admin/memory/embeddings/backfill', { batch: 500 });
      if (progress.remaining === 0) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    for (const item of saved.values()) expect((await mm.get<{ hasEmbedding: boolean }>(`/admin/memory/${item.id}`)).hasEmbedding).toBe(true);
    const embedded = await recall();
    expect(embedded[0]).toBe(PRO);
    expect(embedded).not.toContain(ENTERPRISE);
  });

  it('synthesises at most two insights from what is believed now, as a preview', async () => {
    const res = await mm.post<{ dryRun: boolean; sourcesConsidered: number; insights: { id: string; content: string; sourceIds: string[]; confidence: number }[] }>(
      '/admin/memory/reflect',
      { maxInsights: 2, dryRun: true },
    );
    expect(res).toMatchObject({ dryRun: true, sourcesConsidered: 3 });
    // The model was shown the customer's live memories: the current plan, not the retired one.
    const asked = chatText(model.requests.at(-1)!.body as ChatBody);
    for (const content of [PRO, CSV, SLACK]) expect(asked).toContain(content);
    expect(asked).not.toContain(ENTERPRISE);
    // The example prints "content  (NN%)" per insight: two of the model's three, each citing what it rests on.
    const printed = res.insights.map((i) => `${i.content}  (${Math.round(i.confidence * 100)}%)`);
    expect(printed).toEqual([
      'Acme is a cost-conscious account: it moved down to Pro and is sensitive to slow exports.  (72%)',
      'Jane should get ticket updates on Slack rather than by email.  (90%)',
    ]);
    expect(res.insights[0]!.sourceIds.sort()).toEqual([saved.get(PRO)!.id, saved.get(CSV)!.id].sort());
    expect(res.insights.every((i) => i.id === '')).toBe(true);
    // A dry run saves nothing.
    expect(await mm.get<MemoryItem[]>('/admin/memory', { type: 'insight' })).toEqual([]);
  });
});
