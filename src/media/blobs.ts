// Where uploaded bytes are kept: a directory (BLOB_DIR, by default blobs/ under DATA_DIR), one file
// per content (named by its SHA-256, so the same bytes are kept once per project), written to a
// temporary name and renamed, so a reader never sees half a file. A blob is named to clients by an
// opaque URI, blob://local/<projectId>/<sha256>, never by a server path.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NotFoundError } from '../platform/errors.js';

export interface StoredBlob {
  blobUri: string;
  sha256: string;
  bytes: number;
}

const URI = /^blob:\/\/local\/([^/]+)\/([0-9a-f]{64})$/;

export class BlobStore {
  constructor(private readonly dir: string) {}

  private pathOf(projectId: string, sha256: string): string {
    return join(this.dir, encodeURIComponent(projectId), sha256.slice(0, 2), sha256);
  }

  async put(projectId: string, data: Uint8Array): Promise<StoredBlob> {
    const sha256 = createHash('sha256').update(data).digest('hex');
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
