import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keccak256, toBytes, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { deriveOwnerPrivateKey, walletSalt } from './ownerKey.ts';

const SECRET = 'owner-key-test-secret-0123456789';
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

describe('deriveOwnerPrivateKey', () => {
  it('is deterministic per (secret, client) and differs between clients and secrets', () => {
    const a1 = deriveOwnerPrivateKey(SECRET, 'acme');
    const a2 = deriveOwnerPrivateKey(SECRET, 'acme');
    const b = deriveOwnerPrivateKey(SECRET, 'globex');
    const other = deriveOwnerPrivateKey(`${SECRET}-rotated`, 'acme');
    expect(a1).toBe(a2);
    expect(b).not.toBe(a1);
    expect(other).not.toBe(a1);
    expect(privateKeyToAccount(a1).address).not.toBe(privateKeyToAccount(b).address);
  });

  it('is HMAC-SHA256(secret, "agent-wallet/owner/v1:" + client) reduced into [1, n-1]', () => {
    const mac = createHmac('sha256', Buffer.from(SECRET, 'utf8')).update('agent-wallet/owner/v1:acme').digest('hex');
    const expected = (BigInt(`0x${mac}`) % (N - 1n)) + 1n;
    expect(BigInt(deriveOwnerPrivateKey(SECRET, 'acme'))).toBe(expected);
    for (const client of ['a', 'b', 'c', 'client-with-a-long-name', 'ünïcødé']) {
      const k = BigInt(deriveOwnerPrivateKey(SECRET, client));
      expect(k > 0n && k < N).toBe(true);
    }
  });

  it('takes the secret as bytes or as UTF-8 text, and refuses a short one', () => {
    expect(deriveOwnerPrivateKey(new TextEncoder().encode(SECRET), 'acme')).toBe(deriveOwnerPrivateKey(SECRET, 'acme'));
    expect(() => deriveOwnerPrivateKey('too-short', 'acme')).toThrow(/at least 16 bytes/);
    expect(() => deriveOwnerPrivateKey(SECRET, '')).toThrow(/apiClient/);
  });
});

describe('walletSalt', () => {
  it('is keccak256 of the agent id as a uint256', () => {
    expect(walletSalt('bot-1')).toBe(BigInt(keccak256(toBytes('bot-1'))));
    expect(toHex(walletSalt('bot-1'), { size: 32 })).toBe(keccak256(toBytes('bot-1')));
    expect(walletSalt('bot-1')).not.toBe(walletSalt('bot-2'));
  });
});
