// POST /memory/media end to end against the local gateway: an image through the vision model,
// audio through transcription, documents read locally (text, HTML, PDF, DOCX) and a PDF without a
// text layer through the model; the text observed into memories; the blob kept; a lying type
// corrected; and the refusals: bad base64, oversize, gateway down (nothing kept), flag off, no
// gateway, the events quota, permission.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatText, startGateway, type ChatBody, type GatewayServer } from '../helpers/gateway-server.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { docx, PNG, pdf, WAV } from './fixtures.js';

describe('POST /memory/media', () => {
  let gateway: GatewayServer;
  let h: Harness;
  let p: { projectId: string; apiKey: string };
  const ingest = (body: Record<string, unknown>, projectId = p.projectId, harness = h) => harness.call('POST', projectId, '/memory/media', { body });
  const b64 = (b: Buffer) => b.toString('base64');

  beforeAll(async () => {
    gateway = await startGateway();
    gateway.chat = (body: ChatBody) => {
      const text = chatText(body);
      if (text.includes('[image image/png]')) return 'I own a blue road bike. I bought it at Halfords in Leeds.';
      if (JSON.stringify(body).includes('data:application/pdf')) return 'My blood type is O negative.';
      return '';
    };
    gateway.transcribe = () => 'I moved to Porto last month and I work at Farfetch now.';
    h = await createHarness({ env: { MODEL_GATEWAY_URL: gateway.url, MEMORY_MULTIMODAL_ENABLED: 'true', MODEL_GATEWAY_RETRY_BASE_MS: '5', MEDIA_MAX_BYTES: '65536' } });
    p = await h.project();
  });
  afterAll(async () => {
    await h?.close();
    await gateway?.close();
  });

  it('reads an image through the vision model and observes what it says', async () => {
    const res = await ingest({ mimeType: 'image/png', dataBase64: b64(PNG), userId: 'maria', source: 'camera' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ modality: 'image', mimeType: 'image/png', extractedText: 'I own a blue road bike. I bought it at Halfords in Leeds.', blobUri: expect.stringMatching(/^blob:\/\/local\//) });
    expect(body.saved.length).toBeGreaterThanOrEqual(1);
    expect(body.saved.map((s: { content: string }) => s.content).join(' ')).toMatch(/bike/i);
    const memory = (await h.call('GET', p.projectId, `/admin/memory/${body.saved[0].id}`)).json();
    expect(memory).toMatchObject({ subject: { kind: 'user', externalId: 'maria' }, metadata: { media: { blobUri: body.blobUri, modality: 'image', source: 'camera' } } });
    const asked = gateway.requests.at(-1)!.body as ChatBody;
    expect(asked.model).toBe(h.config.modelGatewayVisionModel);
  });

  it('transcribes audio, and reads documents locally: text, HTML, PDF and DOCX', async () => {
    const audio = (await ingest({ mimeType: 'audio/wav', dataBase64: b64(WAV), userId: 'maria' })).json();
    expect(audio).toMatchObject({ modality: 'audio', extractedText: 'I moved to Porto last month and I work at Farfetch now.' });
    expect(audio.saved.length).toBeGreaterThanOrEqual(1);
    const calls = gateway.requests.length;
    const documents: [string, Buffer, string][] = [
      ['text/plain', Buffer.from('I am allergic to penicillin.'), 'I am allergic to penicillin.'],
      ['text/html', Buffer.from('<html><body><h1>Note</h1><p>I am vegetarian.</p><script>track()</script></body></html>'), 'Note\n\nI am vegetarian.'],
      ['application/pdf', pdf('My dentist is Dr. Ortiz in Braga.'), 'My dentist is Dr. Ortiz in Braga.'],
      ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', await docx(['I prefer morning appointments.']), 'I prefer morning appointments.'],
    ];
    for (const [mimeType, bytes, text] of documents) {
      const res = await ingest({ mimeType, dataBase64: b64(bytes), userId: 'maria' });
      expect(res.statusCode, `${mimeType}: ${res.body}`).toBe(200);
      expect(res.json()).toMatchObject({ modality: 'document', mimeType, extractedText: text });
    }
    // Documents with text never reached the model.
    expect(gateway.requests.length).toBe(calls);
    // A PDF without a text layer is read by the model.
    const scan = (await ingest({ mimeType: 'application/pdf', dataBase64: b64(pdf(null)), userId: 'maria' })).json();
    expect(scan.extractedText).toBe('My blood type is O negative.');
    expect(JSON.stringify(gateway.requests.at(-1)!.body)).toContain('"type":"file"');
  });

  it('corrects a lying type, and refuses bad base64, oversize and bytes of no supported type', async () => {
    expect((await ingest({ mimeType: 'audio/mpeg', dataBase64: b64(PNG) })).json()).toMatchObject({ modality: 'image', mimeType: 'image/png' });
    for (const body of [
      { mimeType: 'image/png', dataBase64: '%%%' },
      { mimeType: 'image/png', dataBase64: b64(Buffer.alloc(70_000, 7)) },
      { mimeType: 'image/png', dataBase64: b64(Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, ...new Array(56).fill(0)])) },
      { dataBase64: b64(PNG) },
    ]) {
      const res = await ingest(body);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
  });

  it('answers 503 and keeps nothing when the gateway fails after its retries', async () => {
    const q = await h.project();
    gateway.failNext(3, 500);
    const res = await ingest({ mimeType: 'image/png', dataBase64: b64(PNG), userId: 'maria' }, q.projectId);
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe('SERVICE_UNAVAILABLE');
    expect((await h.call('GET', q.projectId, '/admin/memory')).json()).toEqual([]);
    // The failed ingest gave its event back.
    expect(await h.apis.tenancy.usage(q.projectId, 'events-ingested')).toBe(0);
  });

  it('counts an event against the quota, and needs WRITE_MEMORY', async () => {
    const q = await h.project();
    await h.apis.tenancy.setPlan(q.projectId, 'growth', { 'events-ingested': 1 });
    expect((await ingest({ mimeType: 'text/plain', dataBase64: b64(Buffer.from('I like jazz.')) }, q.projectId)).statusCode).toBe(200);
    const over = await ingest({ mimeType: 'text/plain', dataBase64: b64(Buffer.from('I like blues.')) }, q.projectId);
    expect(over.statusCode).toBe(429);
    expect(over.json().code).toBe('QUOTA_EXCEEDED');
    const readOnly = await h.key(p.projectId, ['READ_MEMORY']);
    expect((await h.call('POST', p.projectId, '/memory/media', { apiKey: readOnly, body: { mimeType: 'text/plain', dataBase64: b64(Buffer.from('x')) } })).statusCode).toBe(403);
  });

  it('refuses clearly with the flag off, and without a gateway for images (documents still read)', async () => {
    const off = await createHarness();
    try {
      const q = await off.project();
      const res = await ingest({ mimeType: 'text/plain', dataBase64: b64(Buffer.from('I like jazz.')) }, q.projectId, off);
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ code: 'NOT_CONFIGURED', message: expect.stringContaining('MEMORY_MULTIMODAL_ENABLED') });
    } finally {
      await off.close();
    }
    const noGateway = await createHarness({ env: { MEMORY_MULTIMODAL_ENABLED: 'true' } });
    try {
      const q = await noGateway.project();
      const image = await ingest({ mimeType: 'image/png', dataBase64: b64(PNG) }, q.projectId, noGateway);
      expect(image.statusCode).toBe(503);
      expect(image.json()).toMatchObject({ code: 'NOT_CONFIGURED', message: expect.stringContaining('MODEL_GATEWAY_URL') });
      expect((await ingest({ mimeType: 'text/plain', dataBase64: b64(Buffer.from('I like jazz.')) }, q.projectId, noGateway)).statusCode).toBe(200);
    } finally {
      await noGateway.close();
    }
  });
});
