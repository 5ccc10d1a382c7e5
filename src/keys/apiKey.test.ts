import { describe, expect, it } from 'vitest';
import { generateApiKey, hashSecret, parseApiKey, secretMatches } from './apiKey.ts';

describe('api keys', () => {
  it('round-trips: a generated key parses to its client id and its secret matches the stored hash', () => {
    const { apiKey, clientId, keyHash } = generateApiKey();
    const parsed = parseApiKey(apiKey);
    expect(parsed?.clientId).toBe(clientId);
    expect(secretMatches(parsed!.secret, keyHash)).toBe(true);
    expect(keyHash).toBe(hashSecret(parsed!.secret));
    expect(keyHash).not.toContain(parsed!.secret);
  });

  it('rejects malformed keys and wrong secrets', () => {
    const { apiKey, keyHash } = generateApiKey();
    expect(parseApiKey('nope')).toBeUndefined();
    expect(parseApiKey(apiKey + 'x')).toBeUndefined();
    const other = parseApiKey(generateApiKey().apiKey)!;
    expect(secretMatches(other.secret, keyHash)).toBe(false);
  });

  it('keeps the client id across rotation', () => {
    const first = generateApiKey();
    const rotated = generateApiKey(first.clientId);
    expect(rotated.clientId).toBe(first.clientId);
    expect(rotated.apiKey).not.toBe(first.apiKey);
  });
});
