import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API keys look like `aw_<id>_<secret>`: the id names the ApiClient resource (a lookup is a get by name, no
 * scan), the secret is 32 random bytes in base64url. Only sha256(secret) is stored; rotation keeps the id,
 * so an agent's wallets (derived from the client id) survive it.
 */
const PREFIX = 'aw';
const ID_BYTES = 8;
const SECRET_BYTES = 32;
const KEY_PATTERN = /^aw_([a-z0-9]{16})_([A-Za-z0-9_-]{43})$/;

export interface ParsedApiKey {
  clientId: string;
  secret: string;
}

export function parseApiKey(key: string): ParsedApiKey | undefined {
  const m = KEY_PATTERN.exec(key.trim());
  if (!m) return undefined;
  return { clientId: m[1]!, secret: m[2]! };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, keyHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(keyHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

export function newClientId(): string {
  return randomBytes(ID_BYTES).toString('hex');
}

/** A fresh key for a client id: the full key (shown once) and the hash to store. */
export function generateApiKey(clientId: string = newClientId()): { apiKey: string; clientId: string; keyHash: string } {
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  return { apiKey: `${PREFIX}_${clientId}_${secret}`, clientId, keyHash: hashSecret(secret) };
}
