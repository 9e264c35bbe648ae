// The S3-compatible blob store against a local S3-speaking server: signed path-style requests
// (AWS Signature V4 headers), put / get / delete by a blob URI of this project only, attachments
// kept there when BLOB_S3_* is set, and a partial configuration refused at start.
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { S3BlobStore } from '../../src/media/blobs.js';
import { createHarness } from '../helpers/harness.js';
import { PNG } from './fixtures.js';

describe('S3BlobStore', () => {
  let server: Server;
  let endpoint: string;
  const objects = new Map<string, Buffer>();
  const seen: { method: string; path: string; headers: IncomingHttpHeaders }[] = [];
  const settings = () => ({ endpoint, bucket: 'lattice-blobs', region: 'eu-west-1', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret', timeoutMs: 2000 });

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = decodeURIComponent(req.url ?? '');
        seen.push({ method: req.method!, path, headers: req.headers });
        if (!String(req.headers.authorization).startsWith('AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/')) return res.writeHead(403).end();
        if (req.method === 'PUT') {
          objects.set(path, Buffer.concat(chunks));
          return res.writeHead(200).end();
        }
        if (req.method === 'GET') return objects.has(path) ? res.writeHead(200).end(objects.get(path)) : res.writeHead(404).end();
        if (req.method === 'DELETE') {
          objects.delete(path);
          return res.writeHead(204).end();
        }
        res.writeHead(405).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('puts, gets and deletes signed, path-style, by a URI of this project only', async () => {
    const store = new S3BlobStore(settings());
    const data = new Uint8Array(Buffer.from('hello blob'));
    const sha = createHash('sha256').update(data).digest('hex');
    const put = await store.put('p1', data);
    expect(put).toEqual({ blobUri: `s3://lattice-blobs/p1/${sha}`, sha256: sha, bytes: data.byteLength });
    const request = seen.at(-1)!;
    expect(request).toMatchObject({ method: 'PUT', path: `/lattice-blobs/p1/${sha}` });
    expect(request.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/s3\/aws4_request, SignedHeaders=.*, Signature=[0-9a-f]{64}$/);
    expect(['UNSIGNED-PAYLOAD', sha]).toContain(request.headers['x-amz-content-sha256']);
    expect((await store.get('p1', put.blobUri)).toString()).toBe('hello blob');
    await expect(store.get('p2', put.blobUri)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await store.delete('p1', put.blobUri);
    await expect(store.get('p1', put.blobUri)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(new S3BlobStore({ ...settings(), secretAccessKey: 'x', accessKeyId: 'WRONG' }).put('p1', data)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });

  it('keeps attachments in the bucket when BLOB_S3_* is set', async () => {
    const h = await createHarness({ env: { BLOB_S3_ENDPOINT: endpoint, BLOB_S3_BUCKET: 'lattice-blobs', BLOB_S3_ACCESS_KEY_ID: 'AKIDEXAMPLE', BLOB_S3_SECRET_ACCESS_KEY: 'secret' } });
    try {
      const p = await h.project();
      const res = await h.call('POST', p.projectId, '/memory/attachments', { body: { subject: { kind: 'user', externalId: 'maria' }, mimeType: 'image/png', dataBase64: PNG.toString('base64'), content: 'bike receipt' } });
      expect(res.statusCode, res.body).toBe(201);
      const { blobUri, sha256 } = res.json().metadata.attachment;
      expect(blobUri).toBe(`s3://lattice-blobs/${p.projectId}/${sha256}`);
      expect(objects.get(`/lattice-blobs/${p.projectId}/${sha256}`)).toEqual(PNG);
    } finally {
      await h.close();
    }
  });

  it('refuses a partial configuration at start', () => {
    expect(() => loadConfig({ BLOB_S3_BUCKET: 'b' })).toThrow(/set all four or none/);
  });
});
