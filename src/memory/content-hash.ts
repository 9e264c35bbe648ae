// The idempotency key of a memory's text: SHA-256 of the normalised content (case, whitespace and
// trailing punctuation do not count), so a replayed or trivially respelled write finds its twin. An
// event saved with the time it happened is keyed by that time too (eventKey): the same words at
// another time are another event ("Order" placed on three days is three orders, as the public
// clients' observe records them), while a replay of the same write still finds its twin.
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

/** The key of an event saved with the time it happened: its content's and that time's. */
export function eventKey(content: string, at: Date): string {
  return createHash('sha256').update(`${normaliseContent(content)}\u0000${at.toISOString()}`, 'utf8').digest('hex');
}

/** A memory's idempotency key: eventKey for an event with its time given, else contentHash. */
export function memoryKey(content: string, type: string, validFrom: Date | undefined): string {
  return type === 'event' && validFrom !== undefined ? eventKey(content, validFrom) : contentHash(content);
}
