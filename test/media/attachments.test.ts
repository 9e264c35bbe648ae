// POST /memory/attachments: the blob kept once per content, the caption remembered, the type read
// from the bytes (a lying type corrected, bytes of no supported type refused), strict base64, the
// size limit, validation, permission and isolation.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

// A 1x1 PNG and the start of a WAV file: real signatures.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const WAV = Buffer.concat([Buffer.from('RIFF'), Buffer.from([36, 0, 0, 0]), Buffer.from('WAVEfmt '), Buffer.alloc(28)]);

describe('POST /memory/attachments', () => {
  let h: Harness;
  let p: { projectId: string; apiKey: string };
  const subject = { kind: 'user', externalId: 'maria' };
  const attach = (body: Record<string, unknown>, projectId = p.projectId, apiKey?: string) => h.call('POST', projectId, '/memory/attachments', { body, ...(apiKey ? { apiKey } : {}) });

  beforeAll(async () => {
    h = await createHarness({ env: { MEDIA_MAX_BYTES: '2048' } });
    p = await h.project();
  });
  afterAll(async () => h?.close());

  it('keeps the file once per content and remembers the caption, with the file in metadata', async () => {
    const res = await attach({ subject, mimeType: 'image/png', dataBase64: PNG.toString('base64'), fileName: 'receipt.png', content: 'Receipt for the blue bike, paid in cash', importance: 7 });
    expect(res.statusCode, res.body).toBe(201);
    const memory = res.json();
    expect(memory).toMatchObject({ type: 'observation', source: 'attachment', content: 'Receipt for the blue bike, paid in cash', importance: 7, subject });
    expect(memory.metadata).toMatchObject({
      fileId: expect.stringMatching(/^[0-9a-f]{64}$/),
      attachment: { blobUri: `blob://local/${p.projectId}/${memory.metadata.fileId}`, mimeType: 'image/png', declaredMimeType: null, modality: 'image', fileName: 'receipt.png', bytes: PNG.length },
    });
    // The same bytes again are one blob; the same caption again is the same memory.
    const again = await attach({ subject, mimeType: 'image/png', dataBase64: PNG.toString('base64'), content: 'Receipt for the blue bike, paid in cash' });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(memory.id);
    const dir = `${h.config.blobDir}/${encodeURIComponent(p.projectId)}/${memory.metadata.fileId.slice(0, 2)}`;
    expect(await readdir(dir)).toEqual([memory.metadata.fileId]);
    // Without a caption the memory names the file.
    const uncaptioned = (await attach({ subject, mimeType: 'audio/wav', dataBase64: WAV.toString('base64') })).json();
    expect(uncaptioned.content).toBe(`Attachment: an audio file (audio/wav, ${WAV.length} bytes)`);
  });

  it('keeps no blob when the memory cannot be written, unless another memory refers to the same bytes', async () => {
    // A real failure of the write: a trigger refuses this caption.
    await h.db.exec(`CREATE FUNCTION refuse_caption() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.content = 'refused caption' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_caption BEFORE INSERT ON memories FOR EACH ROW EXECUTE FUNCTION refuse_caption();`);
    try {
      const bytes = Buffer.concat([PNG, Buffer.from('only for the refused write')]);
      const failed = await attach({ subject, mimeType: 'image/png', dataBase64: bytes.toString('base64'), content: 'refused caption' });
      expect(failed.statusCode).toBe(500);
      const sha = createHash('sha256').update(bytes).digest('hex');
      expect(existsSync(`${h.config.blobDir}/${encodeURIComponent(p.projectId)}/${sha.slice(0, 2)}/${sha}`)).toBe(false);
      // The same bytes a memory already holds stay when a second write of them fails.
      const kept = await attach({ subject, mimeType: 'image/png', dataBase64: PNG.toString('base64'), content: 'refused caption' });
      expect(kept.statusCode).toBe(500);
      const pngSha = createHash('sha256').update(PNG).digest('hex');
      expect(existsSync(`${h.config.blobDir}/${encodeURIComponent(p.projectId)}/${pngSha.slice(0, 2)}/${pngSha}`)).toBe(true);
    } finally {
      await h.db.exec('DROP TRIGGER refuse_caption ON memories; DROP FUNCTION refuse_caption();');
    }
  });

  it('reads the type from the bytes: corrects a declared type they contradict, refuses bytes of no supported type', async () => {
    const lying = await attach({ subject, mimeType: 'image/jpeg', dataBase64: PNG.toString('base64'), content: 'a photo' });
    expect(lying.statusCode).toBe(201);
    expect(lying.json().metadata.attachment).toMatchObject({ mimeType: 'image/png', declaredMimeType: 'image/jpeg' });
    const text = await attach({ subject, mimeType: 'text/plain', dataBase64: Buffer.from('Shopping list: oat milk, eggs').toString('base64') });
    expect(text.json().metadata.attachment).toMatchObject({ mimeType: 'text/plain', modality: 'document', declaredMimeType: null });
    // An executable posing as an image; random bytes posing as a PDF.
    const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(56)]);
    for (const [mimeType, bytes] of [['image/png', elf], ['application/pdf', Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80, 0x81])]] as const) {
      const refused = await attach({ subject, mimeType, dataBase64: bytes.toString('base64') });
      expect(refused.statusCode, mimeType).toBe(400);
      expect(refused.json()).toMatchObject({ code: 'VALIDATION_ERROR', params: { errors: [expect.objectContaining({ path: 'body.dataBase64' })] } });
    }
  });

  it('refuses bad base64, an empty or oversize file and a malformed body, and keeps nothing', async () => {
    const before = (await h.call('GET', p.projectId, '/admin/memory?limit=500')).json().length;
    const cases: Record<string, unknown>[] = [
      { subject, mimeType: 'image/png', dataBase64: 'not base64 at all!' },
      { subject, mimeType: 'image/png', dataBase64: '' },
      { subject, mimeType: 'image/png', dataBase64: Buffer.alloc(3000, 1).toString('base64') },
      { mimeType: 'image/png', dataBase64: PNG.toString('base64') },
      { subject, mimeType: 'image/png', dataBase64: PNG.toString('base64'), colour: 'blue' },
    ];
    for (const body of cases) {
      const res = await attach(body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
    }
    expect((await attach(cases[2]!)).json().message).toContain('MEDIA_MAX_BYTES');
    expect((await h.call('GET', p.projectId, '/admin/memory?limit=500')).json()).toHaveLength(before);
  });

  it("needs WRITE_MEMORY, and one project's file is not another's", async () => {
    const readOnly = await h.key(p.projectId, ['READ_MEMORY']);
    expect((await attach({ subject, mimeType: 'image/png', dataBase64: PNG.toString('base64') }, p.projectId, readOnly)).statusCode).toBe(403);
    const other = await h.project();
    const mine = (await attach({ subject, mimeType: 'image/png', dataBase64: PNG.toString('base64'), content: 'other project photo' }, other.projectId)).json();
    expect(mine.metadata.attachment.blobUri).toBe(`blob://local/${other.projectId}/${mine.metadata.fileId}`);
    expect((await h.call('GET', p.projectId, `/admin/memory/${mine.id}`)).statusCode).toBe(404);
  });
});
