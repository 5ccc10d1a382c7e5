import { describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { isChainError } from '../errors.ts';
import { Mempool, type PoolEntry } from './mempool.ts';

const A: Address = '0x00000000000000000000000000000000000000Aa';
const B: Address = '0x00000000000000000000000000000000000000bB';

function entry(sender: Address, nonce: bigint, tag = ''): PoolEntry {
  const hash = `0x${sender.slice(2)}${nonce.toString(16).padStart(4, '0')}${tag}` as Hex;
  return {
    hash,
    sender,
    nonce,
    signed: {} as PoolEntry['signed'],
    packed: {} as PoolEntry['packed'],
    gas: { callGasLimit: 1n, verificationGasLimit: 1n, preVerificationGas: 1n, paymasterVerificationGasLimit: 1n, paymasterPostOpGasLimit: 0n },
    validUntil: Number.POSITIVE_INFINITY,
    inFlight: false,
    failedSends: 0,
    submittedAt: 0,
  };
}

describe('Mempool', () => {
  it('keeps each sender in nonce order whatever the arrival order', () => {
    const pool = new Mempool();
    for (const n of [3n, 0n, 2n, 1n]) pool.add(entry(A, n));
    expect(pool.ofSender(A).map((e) => e.nonce)).toEqual([0n, 1n, 2n, 3n]);
  });

  it('treats the same hash as a no-op and refuses another operation with a held nonce', () => {
    const pool = new Mempool();
    expect(pool.add(entry(A, 0n))).toBe(true);
    expect(pool.add(entry(A, 0n))).toBe(false);
    expect(pool.size).toBe(1);
    let thrown: unknown;
    try {
      pool.add(entry(A, 0n, 'ff'));
    } catch (e) {
      thrown = e;
    }
    expect(isChainError(thrown, 'nonce_conflict')).toBe(true);
  });

  it('serves senders in arrival order and moves a served sender to the back', () => {
    const pool = new Mempool();
    pool.add(entry(A, 0n));
    pool.add(entry(B, 0n));
    expect([...pool.senders()].map(([s]) => s)).toEqual([A, B]);
    pool.rotate(A);
    expect([...pool.senders()].map(([s]) => s)).toEqual([B, A]);
  });

  it('matches hashes and senders case-insensitively and forgets an emptied sender', () => {
    const pool = new Mempool();
    const e = entry(A, 0n);
    pool.add(e);
    expect(pool.get(e.hash.toUpperCase().replace('0X', '0x') as Hex)).toBe(e);
    expect(pool.ofSender(A.toLowerCase() as Address)).toHaveLength(1);
    pool.remove(e.hash);
    expect([...pool.senders()]).toEqual([]);
    expect(pool.size).toBe(0);
  });
});
