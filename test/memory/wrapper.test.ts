// The public TypeScript client's model wrapper, end to end (issue 35, deliverable 9). The client is
// not on the npm registry, so this makes the calls its MemoryMiddleware makes (src/integrations/
// memory-middleware.ts of ThinkfleetAI/thinkfleet-memory-sdk), in the same order and shapes, over
// real HTTP: a listening Lattice, and a local OpenAI-compatible server as the model.
//   before the model call: POST /memory/context { turns, intent?, tokenBudget?, limit?, excludeCategories?, brainId? }
//     (never a subject or a userId), and when `context` is not null, a system message appended after
//     the host's own system messages: the preamble, a blank line, the context;
//   the model call: POST {model}/v1/chat/completions;
//   after it: POST /memory/observe { text: last human turn + "\nassistant: " + reply, role: 'user',
//     userId?, agentId?, sessionId?, subject? } (only the keys given).
// The client sends Authorization: Bearer and, on POST, Content-Type: application/json; it treats a
// memory failure as no context (the model still runs).
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { startGateway, type ChatBody, type GatewayServer } from '../helpers/gateway-server.js';

type Message = { role: string; content: string };

const PREAMBLE =
  "The following facts come from the user's persistent memory store. Treat them as background you already know, and say so if you rely on one. " +
  'If something here conflicts with what the user says now, the user is right — prefer the live turn and note the discrepancy.';

describe("the clients' model wrapper against Lattice and a local model", () => {
  let h: Harness;
  let model: GatewayServer;
  let lattice: string;
  let project: { projectId: string; apiKey: string };

  beforeAll(async () => {
    model = await startGateway();
    // The model answers from what it was told: it repeats the memory block it found, if any.
    model.chat = (body: ChatBody) => {
      const memory = body.messages.find((m) => m.role === 'system' && typeof m.content === 'string' && m.content.startsWith(PREAMBLE));
      return memory ? `From memory: ${(memory.content as string).slice(PREAMBLE.length).trim()}` : 'Noted, thank you.';
    };
    h = await createHarness();
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    lattice = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    project = await h.project();
  });
  afterAll(async () => {
    await h?.close();
    await model?.close();
  });

  /** The client's HTTP: its URL, bearer key and JSON content type on POST. */
  const api = async (path: string, body: unknown) => {
    const res = await fetch(`${lattice}/api/v1/projects/${project.projectId}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${project.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  /** MemoryMiddleware.run: inject, call the model, capture. */
  async function run(messages: Message[], options: { userId?: string; sessionId?: string; tokenBudget?: number } = {}) {
    const context = await api('/memory/context', { turns: messages.map(({ role, content }) => ({ role, content })), tokenBudget: options.tokenBudget });
    const prepared = [...messages];
    if (context.status === 200 && context.body.context) {
      let at = 0;
      while (at < prepared.length && prepared[at]!.role === 'system') at++;
      prepared.splice(at, 0, { role: 'system', content: `${PREAMBLE}\n\n${context.body.context as string}` });
    }
    const completion = await fetch(`${model.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-local' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: prepared }),
    });
    const reply = ((await completion.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    const human = [...messages].reverse().find((m) => !['assistant', 'system', 'tool'].includes(m.role));
    const text = [human?.content, `assistant: ${reply}`].filter(Boolean).join('\n');
    const observed = await api('/memory/observe', {
      text,
      role: 'user',
      ...(options.userId ? { userId: options.userId } : {}),
      ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    });
    return { context, prepared, reply, observed };
  }

  it('a first conversation is observed, and a second one gets its facts in the system context', async () => {
    const system = { role: 'system', content: 'You are a concise travel assistant.' };
    const first = await run([system, { role: 'user', content: 'I moved to Lisbon last month. I am allergic to peanuts.' }], { sessionId: 's1' });
    // Nothing known yet: no memory block, the model still runs, and the turn is saved.
    expect(first.context.status).toBe(200);
    expect(first.context.body).toMatchObject({ context: null, subject: null });
    expect(first.prepared).toHaveLength(2);
    expect(first.reply).toBe('Noted, thank you.');
    expect(first.observed.status).toBe(200);
    const saved = first.observed.body.saved as { content: string }[];
    expect(saved.map((m) => m.content).join(' ')).toMatch(/Lisbon/);
    expect(saved.map((m) => m.content).join(' ')).toMatch(/peanut/);

    const second = await run([system, { role: 'user', content: 'Book me a dinner place nearby. Any food allergies you should mind?' }], { sessionId: 's2' });
    expect(second.context.status).toBe(200);
    const block = second.context.body.context as string;
    expect(block).toMatch(/peanut/);
    // Injected after the host's own system prompt, before the conversation; the model saw it.
    expect(second.prepared.map((m) => m.role)).toEqual(['system', 'system', 'user']);
    expect(second.prepared[0]).toEqual(system);
    expect(second.prepared[1]!.content).toContain(block);
    expect(second.reply).toContain('peanut');
    const asked = model.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!.body as ChatBody;
    expect(asked.messages[1]!.content).toContain('peanut');
    expect(second.context.body.tokensEstimate as number).toBeLessThanOrEqual(1200);
  });

  it('keeps each end user to their own memories when the conversation says who is speaking', async () => {
    // The wrapper with userId set writes that user's memories; a later conversation in which the
    // user names themself finds them, and another user's conversation does not.
    await run([{ role: 'user', content: 'I prefer aisle seats on long flights.' }], { userId: 'noor' });
    const noor = await run([{ role: 'user', content: "Hi, I'm Noor. Which seat should you pick for my flight?" }]);
    expect(noor.context.body.subject).toMatchObject({ kind: 'user', externalId: 'noor', origin: 'speaker-first-person' });
    expect(noor.context.body.context as string).toMatch(/aisle/);
    const omar = await run([{ role: 'user', content: "I'm Omar. Which seat should you pick for my flight?" }]);
    expect(omar.context.body.context).toBeNull();
    expect(omar.reply).toBe('Noted, thank you.');
  });
});
