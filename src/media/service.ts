// Attachments and media. An attachment is kept as a blob and remembered by the caller's caption, no
// model involved. (Media ingest, which reads the bytes with the model gateway, builds on the same
// decoding, sniffing and storage.)
import type { MemoryApi } from '../memory/index.js';
import type { Memory } from '../memory/schemas.js';
import { ValidationError } from '../platform/errors.js';
import type { BlobStore } from './blobs.js';
import type { AttachmentBody } from './schemas.js';
import { sniff } from './sniff.js';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict base64: whitespace ignored, any other stray character refused (Buffer.from would skip it silently). */
export function decodeBase64(text: string, maxBytes: number): Uint8Array<ArrayBuffer> {
  const compact = text.replace(/\s+/g, '');
  if (!BASE64.test(compact) || compact.length % 4 === 1) {
    throw new ValidationError('dataBase64 is not base64', { errors: [{ path: 'body.dataBase64', message: 'not base64' }] });
  }
  const bytes = Buffer.from(compact, 'base64');
  if (bytes.byteLength === 0) throw new ValidationError('dataBase64 holds no bytes', { errors: [{ path: 'body.dataBase64', message: 'empty' }] });
  if (bytes.byteLength > maxBytes) {
    throw new ValidationError(`the file is ${bytes.byteLength} bytes; at most ${maxBytes} (MEDIA_MAX_BYTES)`, { errors: [{ path: 'body.dataBase64', message: `over ${maxBytes} bytes` }] });
  }
  return new Uint8Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

export class MediaService {
  constructor(
    private readonly memory: Pick<MemoryApi, 'save'>,
    private readonly blobs: BlobStore,
    private readonly settings: { maxBytes: number },
  ) {}

  /** The blob kept and a memory of the caller's caption (observation), with the file in metadata. */
  async attach(projectId: string, body: AttachmentBody): Promise<{ memory: Memory; created: boolean }> {
    const bytes = decodeBase64(body.dataBase64, this.settings.maxBytes);
    const sniffed = await sniff(bytes, body.mimeType);
    const blob = await this.blobs.put(projectId, bytes);
    const describe = `${body.fileName ?? { image: 'an image', audio: 'an audio file', document: 'a document' }[sniffed.modality]} (${sniffed.mimeType}, ${blob.bytes} bytes)`;
    return this.memory.save(projectId, {
      type: 'observation',
      content: body.content?.trim() ? body.content.trim() : `Attachment: ${describe}`,
      subject: body.subject,
      source: 'attachment',
      importance: body.importance,
      validFrom: body.occurredAt === undefined ? undefined : new Date(body.occurredAt),
      metadata: {
        ...body.metadata,
        ...(body.activityType ? { activityType: body.activityType } : {}),
        fileId: blob.sha256,
        attachment: { blobUri: blob.blobUri, mimeType: sniffed.mimeType, declaredMimeType: sniffed.correctedFrom, modality: sniffed.modality, fileName: body.fileName ?? null, bytes: blob.bytes, sha256: blob.sha256 },
      },
    });
  }
}
