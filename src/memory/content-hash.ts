// The idempotency key of a memory's text: SHA-256 of the normalised content (case, whitespace and
// trailing punctuation do not count), so a replayed or trivially respelled write finds its twin.
import { createHash } from 'node:crypto';

export function normaliseContent(content: string): string {
  return content
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[\s.!?;:,]+$/u, '');
}

export function contentHash(content: string): string {
  return createHash('sha256').update(normaliseContent(content), 'utf8').digest('hex');
}
