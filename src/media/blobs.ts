// Where uploaded bytes are kept: a directory (BLOB_DIR, by default blobs/ under DATA_DIR), or an
// S3-compatible bucket when BLOB_S3_BUCKET is set. One object per content (named by its SHA-256, so
// the same bytes are kept once per project). On disk a file is written to a temporary name and
// renamed, so a reader never sees half of one. A blob is named to clients by an opaque URI,
// blob://local/<projectId>/<sha256> or s3://<bucket>/<projectId>/<sha256>, never by a server path.
import { AwsClient } from 'aws4fetch';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DependencyUnavailableError, NotFoundError } from '../platform/errors.js';

export interface StoredBlob {
  blobUri: string;
  sha256: string;
  bytes: number;
}

export interface BlobStore {
  put(projectId: string, data: Uint8Array<ArrayBuffer>): Promise<StoredBlob>;
  get(projectId: string, blobUri: string): Promise<Buffer>;
  delete(projectId: string, blobUri: string): Promise<void>;
}

const sha256Of = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
const URI = /^blob:\/\/local\/([^/]+)\/([0-9a-f]{64})$/;

export class LocalBlobStore implements BlobStore {
  constructor(private readonly dir: string) {}

  private pathOf(projectId: string, sha256: string): string {
    return join(this.dir, encodeURIComponent(projectId), sha256.slice(0, 2), sha256);
  }

  async put(projectId: string, data: Uint8Array<ArrayBuffer>): Promise<StoredBlob> {
    const sha256 = sha256Of(data);
    const path = this.pathOf(projectId, sha256);
    await mkdir(join(path, '..'), { recursive: true });
    const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temporary, data);
    await rename(temporary, path);
    return { blobUri: `blob://local/${projectId}/${sha256}`, sha256, bytes: data.byteLength };
  }

  /** The bytes of a blob of this project. */
  async get(projectId: string, blobUri: string): Promise<Buffer> {
    const match = URI.exec(blobUri);
    if (!match || match[1] !== projectId) throw new NotFoundError(`blob ${blobUri} not found`);
    return readFile(this.pathOf(projectId, match[2]!)).catch(() => {
      throw new NotFoundError(`blob ${blobUri} not found`);
    });
  }

  async delete(projectId: string, blobUri: string): Promise<void> {
    const match = URI.exec(blobUri);
    if (match && match[1] === projectId) await rm(this.pathOf(projectId, match[2]!), { force: true });
  }
}

/**
 * An S3-compatible bucket (AWS S3, MinIO, R2, ...), path-style URLs (<endpoint>/<bucket>/<key>),
 * requests signed with AWS Signature V4 (aws4fetch). Keys are <projectId>/<sha256>.
 */
export class S3BlobStore implements BlobStore {
  private readonly client: AwsClient;

  constructor(private readonly options: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string; timeoutMs: number }) {
    this.client = new AwsClient({ accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey, region: options.region, service: 's3' });
  }

  private url(key: string): string {
    return `${this.options.endpoint.replace(/\/+$/, '')}/${encodeURIComponent(this.options.bucket)}/${key.split('/').map(encodeURIComponent).join('/')}`;
  }

  private keyOf(projectId: string, blobUri: string): string | undefined {
    const prefix = `s3://${this.options.bucket}/`;
    if (!blobUri.startsWith(prefix)) return undefined;
    const key = blobUri.slice(prefix.length);
    return key.startsWith(`${projectId}/`) && /^[0-9a-f]{64}$/.test(key.slice(projectId.length + 1)) ? key : undefined;
  }

  private async send(method: string, key: string, body?: Uint8Array<ArrayBuffer>): Promise<Response> {
    try {
      return await this.client.fetch(this.url(key), { method, ...(body ? { body } : {}), signal: AbortSignal.timeout(this.options.timeoutMs) });
    } catch (error) {
      throw new DependencyUnavailableError('the blob store (BLOB_S3_ENDPOINT) could not be reached', { cause: error });
    }
  }

  async put(projectId: string, data: Uint8Array<ArrayBuffer>): Promise<StoredBlob> {
    const sha256 = sha256Of(data);
    const key = `${projectId}/${sha256}`;
    const response = await this.send('PUT', key, data);
    if (!response.ok) throw new DependencyUnavailableError(`the blob store answered ${response.status} to storing a file`);
    return { blobUri: `s3://${this.options.bucket}/${key}`, sha256, bytes: data.byteLength };
  }

  async get(projectId: string, blobUri: string): Promise<Buffer> {
    const key = this.keyOf(projectId, blobUri);
    if (!key) throw new NotFoundError(`blob ${blobUri} not found`);
    const response = await this.send('GET', key);
    if (response.status === 404) throw new NotFoundError(`blob ${blobUri} not found`);
    if (!response.ok) throw new DependencyUnavailableError(`the blob store answered ${response.status} to reading a file`);
    return Buffer.from(await response.arrayBuffer());
  }

  async delete(projectId: string, blobUri: string): Promise<void> {
    const key = this.keyOf(projectId, blobUri);
    if (!key) return;
    const response = await this.send('DELETE', key);
    if (!response.ok && response.status !== 404) throw new DependencyUnavailableError(`the blob store answered ${response.status} to deleting a file`);
  }
}
