import { describe, expect, it } from 'vitest';
import { NonceAllocator } from './nonceAllocator.ts';

const A = '0x00000000000000000000000000000000000000aa';
const B = '0x00000000000000000000000000000000000000bb';
const FAR = 4_000_000_000;

describe('NonceAllocator', () => {
  it('hands out sequential nonces from the chain nonce, per wallet', () => {
    const n = new NonceAllocator();
    expect([n.allocate(A, 5n, FAR).nonce, n.allocate(A, 5n, FAR).nonce, n.allocate(A, 5n, FAR).nonce]).toEqual([5n, 6n, 7n]);
    expect(n.allocate(B, 0n, FAR).nonce).toBe(0n);
  });

  it('forgets nonces the chain has passed and follows the chain when it is ahead', () => {
    const n = new NonceAllocator();
    n.allocate(A, 0n, FAR);
    n.allocate(A, 0n, FAR);
    expect(n.allocate(A, 2n, FAR).nonce).toBe(2n); // 0 and 1 were included
    expect(n.reserved(A)).toEqual([2n]);
    expect(n.allocate(A, 10n, FAR).nonce).toBe(10n); // someone else used 2..9
  });

  it('never re-issues an included nonce when the chain nonce was read just before the inclusion', () => {
    const n = new NonceAllocator();
    const { nonce } = n.allocate(A, 38n, FAR);
    expect(nonce).toBe(38n);
    // A caller reads getNonce = 38, then the bundler reports 38 included before the caller allocates.
    n.included(A, 38n);
    expect(n.allocate(A, 38n, FAR).nonce).toBe(39n);
    // Once the chain has caught up the floor is no longer needed and the chain leads again.
    expect(n.allocate(A, 40n, FAR).nonce).toBe(40n);
  });

  it('forgets reservations up to an included nonce', () => {
    const n = new NonceAllocator();
    for (let i = 0; i < 3; i++) n.allocate(A, 0n, FAR);
    n.included(A, 1n);
    expect(n.reserved(A)).toEqual([2n]);
    n.included(A, 2n);
    expect(n.reserved(A)).toEqual([]);
  });

  it('refills the hole a dropped operation leaves, only for that operation', () => {
    const n = new NonceAllocator();
    for (let i = 0; i < 4; i++) n.reserve(A, BigInt(i), `0x0${i}`, FAR);
    n.release(A, 1n, '0x09'); // another operation's hash: ignored
    expect(n.reserved(A)).toEqual([0n, 1n, 2n, 3n]);
    n.release(A, 1n, '0x01');
    // Reused for a new operation, signed with a later expiry than the one given up: never the same hash.
    expect(n.allocate(A, 0n, FAR)).toEqual({ nonce: 1n, validUntil: FAR + 1 });
    expect(n.allocate(A, 0n, FAR)).toEqual({ nonce: 4n, validUntil: FAR });
  });

  it('lets a reservation whose sponsorship expired (plus grace) be reused', () => {
    let now = 1_000;
    const n = new NonceAllocator({ expiryGraceSeconds: 30, now: () => now });
    expect(n.allocate(A, 0n, 1_010).nonce).toBe(0n);
    now = 1_030; // expired 20 s ago: still within the grace, it might yet land
    expect(n.allocate(A, 0n, FAR).nonce).toBe(1n);
    now = 1_041;
    expect(n.allocate(A, 0n, FAR).nonce).toBe(0n);
  });
});
