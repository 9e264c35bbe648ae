// The public clients put the subject in `metadata.subject` on POST /admin/memory (SDK-WIRE.md 4.11,
// 4.12 and 7): those memories must still belong to their subject. The bodies below are the ones the
// SDKs send, field for field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';

describe('the subject in metadata.subject, as the SDKs send it', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  const subject = { kind: 'customer', externalId: 'c-42' };

  it('memory.observe of the SDKs (legacy POST /admin/memory): the memory is the subject’s', async () => {
    const p = await h.project();
    const body = {
      content: 'Opened the pricing page twice',
      type: 'event',
      scope: 'project',
      importance: 5,
      source: 'admin_created',
      validFrom: '2026-11-01T10:00:00.000Z',
      metadata: { subject, eventType: 'page_view', occurredAt: '2026-11-01T10:00:00.000Z', page: '/pricing' },
    };
    const res = await h.call('POST', p.projectId, '/admin/memory', { body });
    expect(res.statusCode).toBe(201);
    expect(res.json().subject).toEqual(subject);
    expect(res.json().metadata).toMatchObject({ subject, eventType: 'page_view' });
    const listed = await h.call('GET', p.projectId, '/admin/memory?subjectKind=customer&subjectExternalId=c-42');
    expect(listed.json().map((m: { id: string }) => m.id)).toEqual([res.json().id]);
    const found = await h.call('POST', p.projectId, '/admin/memory/search', { body: { query: 'pricing page', subject } });
    expect(found.json().map((hit: { id: string }) => hit.id)).toContain(res.json().id);
  });

  it('health and consent writers: the subject comes from metadata', async () => {
    const p = await h.project();
    const health = await h.call('POST', p.projectId, '/admin/memory', {
      body: {
        content: 'hba1c = 6.1 %',
        type: 'fact',
        scope: 'project',
        category: 'health',
        source: 'sdk:health',
        metadata: { subject: { kind: 'patient', externalId: 'p-7' }, health: { biomarker: 'hba1c', value: 6.1, unit: '%' } },
      },
    });
    expect(health.statusCode).toBe(201);
    expect(health.json().subject).toEqual({ kind: 'patient', externalId: 'p-7' });
    const consent = await h.call('POST', p.projectId, '/admin/memory', {
      body: {
        content: 'Consent withdrawn',
        type: 'consent',
        scope: 'project',
        importance: 10,
        category: 'consent',
        metadata: { subject: { kind: 'patient', externalId: 'p-7' }, optedOut: true, optedOutAt: '2026-11-02T00:00:00.000Z', reason: 'asked', recordKind: 'consent' },
      },
    });
    expect(consent.statusCode).toBe(201);
    expect(consent.json().subject).toEqual({ kind: 'patient', externalId: 'p-7' });
  });

  it('the top-level subject wins when both are given; a metadata.subject of another shape is just metadata', async () => {
    const p = await h.project();
    const both = await h.call('POST', p.projectId, '/admin/memory', {
      body: { content: 'Prefers email', subject: { kind: 'user', externalId: 'u-1' }, metadata: { subject: { kind: 'user', externalId: 'u-2' } } },
    });
    expect(both.json().subject).toEqual({ kind: 'user', externalId: 'u-1' });
    const text = await h.call('POST', p.projectId, '/admin/memory', { body: { content: 'Email about invoices', metadata: { subject: 'Re: invoices' } } });
    expect(text.statusCode).toBe(201);
    expect(text.json().subject).toBeNull();
    expect(text.json().metadata).toEqual({ subject: 'Re: invoices' });
  });

  it('observe with metadata.subject extracts statements for that subject', async () => {
    const p = await h.project();
    const res = await h.call('POST', p.projectId, '/memory/observe', {
      body: { text: 'I moved to Porto last year and I work remotely.', metadata: { subject } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().saved.length).toBeGreaterThan(0);
    for (const m of res.json().saved) expect(m.subject).toEqual(subject);
  });

  it("a key of another project never sees the subject's memories", async () => {
    const a = await h.project();
    const b = await h.project();
    await h.call('POST', a.projectId, '/admin/memory', { body: { content: 'Lives in Porto', metadata: { subject } } });
    const res = await h.call('GET', b.projectId, '/admin/memory?subjectKind=customer&subjectExternalId=c-42');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([]);
  });
});
