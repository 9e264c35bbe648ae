// Attachments and media. An attachment is kept as a blob and remembered by the caller's caption, no
// model involved. Media ingest reads the file into text (an image through the gateway's vision
// model, audio through its transcription, a document locally where it can and through the model
// otherwise), keeps the blob, and hands the text to the observe pipeline, which decides what to
// remember. Ingest is behind MEMORY_MULTIMODAL_ENABLED, counts one event against the events-ingested
// quota (given back if it fails) and spends model tokens (metered by the gateway).
import type { MemoryApi, ObserveResult } from '../memory/index.js';
import type { Memory } from '../memory/schemas.js';
import { NotConfiguredError, ValidationError } from '../platform/errors.js';
import type { ModelGateway } from '../platform/gateway.js';
import type { Principal, TenancyApi } from '../tenancy/index.js';
import type { BlobStore } from './blobs.js';
import type { AttachmentBody, MediaBody } from './schemas.js';
import { sniff, type Modality } from './sniff.js';
import { documentText } from './text.js';

/** The text handed to observe, at most (observe reads one turn; a long document is cut here). */
const MAX_TEXT = 20_000;

const IMAGE_PROMPT =
  'You read an image a person shared with an AI agent that remembers things about them. Write, as short plain sentences in the first person ' +
  "as the person would say them, the durable facts the image shows about them (what they own, where they are, what they bought, what a document says). Write nothing if it shows none.";
const DOCUMENT_PROMPT = 'Transcribe the text of this document as plain text, without commentary.';

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
    private readonly memory: Pick<MemoryApi, 'save' | 'observe'>,
    private readonly blobs: BlobStore,
    private readonly gateway: Pick<ModelGateway, 'chat' | 'transcribe' | 'requireConfigured'>,
    private readonly tenancy: Pick<TenancyApi, 'metered'>,
    private readonly settings: { maxBytes: number; multimodal: boolean },
    /** Whether a memory refers to the blob (a blob kept for a failed ingest is removed unless one does). */
    private readonly referenced: (projectId: string, blobUri: string) => Promise<boolean>,
  ) {}

  /** Remembers a kept blob; when that fails, the blob goes too unless a memory already refers to the same bytes. */
  private async rememberKept<T>(projectId: string, blobUri: string, remember: () => Promise<T>): Promise<T> {
    try {
      return await remember();
    } catch (error) {
      if (!(await this.referenced(projectId, blobUri).catch(() => true))) await this.blobs.delete(projectId, blobUri).catch(() => undefined);
      throw error;
    }
  }

  private async read(projectId: string, bytes: Uint8Array<ArrayBuffer>, mimeType: string, modality: Modality): Promise<string> {
    const dataUrl = () => `data:${mimeType};base64,${Buffer.from(bytes).toString('base64')}`;
    if (modality === 'audio') return (await this.gateway.transcribe('Media ingest (audio)', { projectId, audio: bytes, mimeType })).text.trim();
    if (modality === 'image') {
      const { text } = await this.gateway.chat('Media ingest (images)', {
        projectId,
        messages: [
          { role: 'system', content: IMAGE_PROMPT },
          { role: 'user', content: [{ type: 'text', text: 'The image:' }, { type: 'image_url', image_url: { url: dataUrl() } }] },
        ],
      });
      return text.trim();
    }
    const local = await documentText(bytes, mimeType);
    if (local !== null) return local;
    const { text } = await this.gateway.chat('Media ingest (documents without a text layer)', {
      projectId,
      messages: [
        { role: 'system', content: DOCUMENT_PROMPT },
        { role: 'user', content: [{ type: 'file', file: { filename: 'document.pdf', file_data: dataUrl() } }] },
      ],
    });
    return text.trim();
  }

  /** Media ingest: the file read into text, the blob kept, the text observed. */
  async ingest(principal: Principal, body: MediaBody) {
    if (!this.settings.multimodal) throw new NotConfiguredError('media ingest is turned off for this deployment: set MEMORY_MULTIMODAL_ENABLED=true (images and audio also need MODEL_GATEWAY_URL); POST /memory/attachments keeps a file with your caption without a model');
    const bytes = decodeBase64(body.dataBase64, this.settings.maxBytes);
    const sniffed = await sniff(bytes, body.mimeType);
    if (sniffed.modality !== 'document') this.gateway.requireConfigured(`Media ingest (${sniffed.modality === 'image' ? 'images' : 'audio'})`);
    const projectId = principal.projectId;
    return this.tenancy.metered(principal, 'events-ingested', 1, async () => {
      const extractedText = (await this.read(projectId, bytes, sniffed.mimeType, sniffed.modality)).slice(0, MAX_TEXT);
      const blob = await this.blobs.put(projectId, bytes);
      const observed =
        extractedText === ''
          ? { saved: [], candidateCount: 0 }
          : await this.rememberKept(projectId, blob.blobUri, (): Promise<ObserveResult> => this.memory.observe(projectId, {
              text: extractedText,
              role: 'user',
              ...(body.userId ? { userId: body.userId, subject: { kind: 'user', externalId: body.userId } } : {}),
              agentId: body.agentId,
              sessionId: body.sessionId,
              metadata: { media: { blobUri: blob.blobUri, mimeType: sniffed.mimeType, declaredMimeType: sniffed.correctedFrom, modality: sniffed.modality, source: body.source ?? null, sha256: blob.sha256 } },
            }));
      return {
        saved: observed.saved.map((m) => ({ id: m.id, content: m.content, kind: m.type })),
        candidateCount: observed.candidateCount,
        extractedText,
        modality: sniffed.modality,
        blobUri: blob.blobUri,
        mimeType: sniffed.mimeType,
      };
    });
  }

  /** The blob kept and a memory of the caller's caption (observation), with the file in metadata. */
  async attach(projectId: string, body: AttachmentBody): Promise<{ memory: Memory; created: boolean }> {
    const bytes = decodeBase64(body.dataBase64, this.settings.maxBytes);
    const sniffed = await sniff(bytes, body.mimeType);
    const blob = await this.blobs.put(projectId, bytes);
    const describe = `${body.fileName ?? { image: 'an image', audio: 'an audio file', document: 'a document' }[sniffed.modality]} (${sniffed.mimeType}, ${blob.bytes} bytes)`;
    return this.rememberKept(projectId, blob.blobUri, () => this.memory.save(projectId, {
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
    }));
  }
}
