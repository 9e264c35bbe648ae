// API key material: random keys with a visible prefix, stored only as a SHA-256 digest. Keys carry
// 256 bits of randomness, so a fast digest is enough: there is nothing to brute-force.
import { createHash, randomBytes } from 'node:crypto';

const PREFIX_LENGTH = 12;

export interface KeyMaterial {
  apiKey: string;
  prefix: string;
  hash: string;
}

export function hashKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

export function keyPrefix(apiKey: string): string {
  return apiKey.slice(0, PREFIX_LENGTH);
}

/** `lat_` + 8 lowercase base32 characters (the visible prefix) + `_` + 43 base64url characters. */
export function generateKey(): KeyMaterial {
  const id = randomBytes(5).toString('hex').slice(0, 8);
  const apiKey = `lat_${id}_${randomBytes(32).toString('base64url')}`;
  return fromKey(apiKey);
}

export function fromKey(apiKey: string): KeyMaterial {
  return { apiKey, prefix: keyPrefix(apiKey), hash: hashKey(apiKey) };
}
