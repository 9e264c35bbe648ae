// The model gateway client against a real local gateway server: structured output and the
// fallback for gateways without it, retries on 429 (Retry-After) and 5xx, no retry on other 4xx,
// time limits, transcription, metering, and the clear refusal when no gateway is configured.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelGateway, parseJsonLoosely, type Usage } from '../../src/platform/gateway.js';
import { startGateway, type GatewayServer } from '../helpers/gateway-server.js';

describe('ModelGateway', () => {
  let server: GatewayServer;
  const pauses: number[] = [];
  const client = (overrides: Partial<ConstructorParameters<typeof ModelGateway>[0]> = {}) =>
    new ModelGateway(
      { url: server.url, apiKey: 'sk-test', timeoutMs: 2000, models: { chat: 'chat-m', vision: 'vision-m', transcription: 'stt-m' }, maxAttempts: 3, retryBaseMs: 100, ...overrides },
      async (ms) => void pauses.push(ms),
    );
  const schema = { name: 'facts', schema: { type: 'object', properties: { facts: { type: 'array', items: { type: 'string' } } }, required: ['facts'], additionalProperties: false } };

  beforeAll(async () => {
    server = await startGateway();
  });
  afterAll(async () => server?.close());

  it('asks for structured output by JSON schema and meters the tokens to the project', async () => {
    server.chat = () => ({ facts: ['likes tea'] });
    const metered: [string, Usage & { model: string; operation: string }][] = [];
    const gateway = client();
    gateway.onUsage((projectId, usage) => metered.push([projectId, usage]));
    const before = server.requests.length;
    const result = await gateway.chat('test', { projectId: 'p1', messages: [{ role: 'user', content: 'I like tea' }], schema });
    expect(result.json).toEqual({ facts: ['likes tea'] });
    const sent = server.requests[before]!;
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.body).toMatchObject({ model: 'chat-m', temperature: 0, response_format: { type: 'json_schema', json_schema: { name: 'facts', strict: true } } });
    expect(metered).toEqual([['p1', expect.objectContaining({ operation: 'chat', model: 'chat-m', totalTokens: result.usage.totalTokens })]]);
    expect(result.usage.totalTokens).toBeGreaterThan(0);
  });

  it('uses the vision model for a message with an image', async () => {
    server.chat = () => 'a red bicycle';
    const before = server.requests.length;
    const result = await client().chat('test', { projectId: 'p1', messages: [{ role: 'user', content: [{ type: 'text', text: 'describe' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] });
    expect(result).toMatchObject({ text: 'a red bicycle', model: 'vision-m' });
    expect((server.requests[before]!.body as { model: string }).model).toBe('vision-m');
  });

  it('falls back to plain text and parses it loosely when the gateway refuses response_format', async () => {
    server.refuseStructuredOutput = true;
    server.chat = () => 'Sure! Here it is:\n```json\n{"facts": ["works at Acme"]}\n```';
    try {
      const before = server.requests.length;
      const result = await client().chat('test', { projectId: 'p1', messages: [{ role: 'user', content: 'I work at Acme' }], schema });
      expect(result.json).toEqual({ facts: ['works at Acme'] });
      expect(server.requests.length - before).toBe(2);
      expect(JSON.stringify(server.requests.at(-1)!.body)).toContain('Answer with JSON only');
    } finally {
      server.refuseStructuredOutput = false;
    }
  });

  it('tries again on 5xx and on 429, honouring Retry-After, and gives up after maxAttempts with 503', async () => {
    server.chat = () => 'fine';
    pauses.length = 0;
    server.failNext(1, 503);
    server.failNext(1, 429, { 'retry-after': '2' });
    expect((await client().chat('test', { projectId: 'p1', messages: [{ role: 'user', content: 'hi' }] })).text).toBe('fine');
    expect(pauses).toHaveLength(2);
    expect(pauses[0]).toBeGreaterThanOrEqual(50);
    expect(pauses[0]).toBeLessThanOrEqual(100);
    expect(pauses[1]).toBe(2000);
    server.failNext(3, 500);
    const failed = client().chat('test', { projectId: 'p1', messages: [{ role: 'user', content: 'hi' }] });
    await expect(failed).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', statusCode: 503, message: expect.stringContaining('tried 3 times') });
  });

  it('does not try again a request the gateway refuses (4xx)', async () => {
    server.failNext(1, 401);
    const before = server.requests.length;
    await expect(client().chat('test', { projectId: 'p1', messages: [{ role: 'user', content: 'hi' }], schema })).rejects.toMatchObject({ status: 401 });
    expect(server.requests.length - before).toBe(1);
  });

  it('gives a slow answer up at the time limit and tries again', async () => {
    // The slow answers take a minute, the time limit is 2 s, and the prompt one is a local answer:
    // each lands on its side of the limit however loaded the machine.
    server.chat = () => 'late but here';
    server.delayNext(1, 60_000);
    const before = server.requests.length;
    expect((await client({ timeoutMs: 2000 }).chat('test', { projectId: 'p1', messages: [{ role: 'user', content: 'hi' }] })).text).toBe('late but here');
    expect(server.requests.length - before).toBe(2);
    server.delayNext(2, 60_000);
    await expect(client({ timeoutMs: 2000, maxAttempts: 2 }).chat('test', { projectId: 'p1', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({
      message: expect.stringContaining('did not answer within 2000 ms'),
    });
  });

  it('transcribes audio as multipart with the transcription model', async () => {
    server.transcribe = ({ bytes, type, model }) => `${model} heard ${bytes.length} bytes of ${type}`;
    const result = await client().transcribe('test', { projectId: 'p1', audio: new Uint8Array([1, 2, 3, 4]), mimeType: 'audio/wav' });
    expect(result.text).toBe('stt-m heard 4 bytes of audio/wav');
    expect(result.usage.totalTokens).toBe(15);
  });

  it('refuses with NOT_CONFIGURED, naming the setting, when no gateway is set', async () => {
    const none = client({ url: undefined });
    expect(none.configured).toBe(false);
    await expect(none.chat('Reflection', { projectId: 'p1', messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({
      code: 'NOT_CONFIGURED',
      statusCode: 503,
      message: expect.stringMatching(/^Reflection needs a model gateway: set MODEL_GATEWAY_URL/),
    });
  });

  it('finds the JSON in a chatty answer, and says so when there is none', () => {
    expect(parseJsonLoosely('{"a":1}')).toEqual({ a: 1 });
    expect(parseJsonLoosely('Here: [1, {"b": "}"}] done')).toEqual([1, { b: '}' }]);
    expect(parseJsonLoosely('```\n{"c": true}\n```')).toEqual({ c: true });
    expect(() => parseJsonLoosely('no json at all')).toThrow(/holds no JSON/);
  });
});
