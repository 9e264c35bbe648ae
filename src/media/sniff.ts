// The MIME type of uploaded bytes, from the bytes. A binary format names itself in its first bytes
// (file-type reads the signature); text has none, so a declared text type is believed when the
// bytes are UTF-8 without NULs. The declared type is corrected when the bytes are another supported
// type (a PNG sent as image/jpeg is a PNG), and refused when they are not a supported type at all.
import { ValidationError } from '../platform/errors.js';

export type Modality = 'image' | 'audio' | 'document';

export const SUPPORTED: Readonly<Record<string, Modality>> = {
  'image/png': 'image',
  'image/jpeg': 'image',
  'image/gif': 'image',
  'image/webp': 'image',
  'audio/mpeg': 'audio',
  'audio/wav': 'audio',
  'audio/x-wav': 'audio',
  'audio/ogg': 'audio',
  'audio/webm': 'audio',
  'audio/mp4': 'audio',
  'audio/x-m4a': 'audio',
  'audio/flac': 'audio',
  'application/pdf': 'document',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'document',
  'text/plain': 'document',
  'text/markdown': 'document',
  'text/csv': 'document',
  'text/html': 'document',
  'application/json': 'document',
};
const TEXT_TYPES = new Set(['text/plain', 'text/markdown', 'text/csv', 'text/html', 'application/json']);

export interface Sniffed {
  mimeType: string;
  modality: Modality;
  /** The type the client declared, when the bytes said otherwise. */
  correctedFrom: string | null;
}

const bare = (mimeType: string) => mimeType.split(';')[0]!.trim().toLowerCase();

function isUtf8Text(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

export async function sniff(bytes: Uint8Array, declared: string): Promise<Sniffed> {
  const claimed = bare(declared);
  // Imported on the first file (about 30 modules the rest of a process never needs).
  const { fileTypeFromBuffer } = await import('file-type');
  const detected = await fileTypeFromBuffer(bytes);
  if (detected) {
    // A zip-based format: a .docx is a zip whose signature file-type reads as docx.
    const type = detected.mime === 'audio/vnd.wave' ? 'audio/wav' : detected.mime;
    const modality = SUPPORTED[type];
    if (!modality) throw new ValidationError(`the bytes are ${type}, which is not a supported media type (declared ${claimed})`, { errors: [{ path: 'body.dataBase64', message: 'the bytes do not match a supported media type' }] });
    return { mimeType: type, modality, correctedFrom: type === claimed ? null : claimed };
  }
  if (TEXT_TYPES.has(claimed) && isUtf8Text(bytes)) return { mimeType: claimed, modality: 'document', correctedFrom: null };
  if (isUtf8Text(bytes)) return { mimeType: 'text/plain', modality: 'document', correctedFrom: claimed === 'text/plain' ? null : claimed };
  throw new ValidationError(`the bytes are not ${claimed} (nor any supported media type)`, { errors: [{ path: 'body.dataBase64', message: 'the bytes do not match a supported media type' }] });
}
