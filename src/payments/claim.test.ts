import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { encodeAbiParameters, encodeEventTopics, parseAbi, type Address, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/env.ts';
import type { TransactionReceiptInfo } from '../chain/types.ts';
import { openEmbeddedStore } from '../store/embedded/index.ts';
import { claimAll, claimedOperationOf, claimOf } from './claim.ts';

const ENTRY_POINT: Address = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';
const OTHER: Address = '0x5555555555555555555555555555555555555555';
const abi = parseAbi([
  'event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event BeforeExecution()',
]);
const op = (n: number): Hex => `0x${n.toString(16).padStart(64, '0')}`;
const opEvent = (hash: Hex, address: Address = ENTRY_POINT) => ({
  address,
  topics: encodeEventTopics({ abi, eventName: 'UserOperationEvent', args: { userOpHash: hash, sender: OTHER, paymaster: OTHER } }) as Hex[],
  data: encodeAbiParameters([{ type: 'uint256' }, { type: 'bool' }, { type: 'uint256' }, { type: 'uint256' }], [0n, true, 1n, 1n]),
  logIndex: 0,
});
const transfer = () => ({
  address: OTHER,
  topics: encodeEventTopics({ abi, eventName: 'Transfer', args: { from: OTHER, to: OTHER } }) as Hex[],
  data: encodeAbiParameters([{ type: 'uint256' }], [5n]),
  logIndex: 0,
});
const receipt = (logs: TransactionReceiptInfo['logs']): TransactionReceiptInfo => ({
  transactionHash: op(99),
  status: 'success',
  blockNumber: 1n,
  blockHash: op(98),
  blockTimestamp: 1n,
  from: OTHER,
  logs,
  confirmations: 1n,
});

describe('the operation a bundle’s transfer belongs to', () => {
  const beforeExecution = { address: ENTRY_POINT, topics: encodeEventTopics({ abi, eventName: 'BeforeExecution' }) as Hex[], data: '0x' as Hex, logIndex: 0 };
  // A bundle of two operations: [BeforeExecution, op1's transfer, op1's event, op2's transfer, op2's event]
  const bundle = receipt([beforeExecution, transfer(), opEvent(op(1)), transfer(), opEvent(op(2))]);

  it('is the first UserOperationEvent of the EntryPoint after it, named as its fee claim', () => {
    expect(claimedOperationOf('base', bundle, ENTRY_POINT, [1])).toEqual({ userOpHash: op(1), claim: `base-op-${'0'.repeat(63)}1` });
    expect(claimedOperationOf('base', bundle, ENTRY_POINT, [3])?.userOpHash).toBe(op(2));
  });

  it('is none for a transfer outside any operation, or when the event comes from another contract', () => {
    expect(claimedOperationOf('base', receipt([transfer()]), ENTRY_POINT, [0])).toBeUndefined();
    expect(claimedOperationOf('base', receipt([transfer(), opEvent(op(1), OTHER)]), ENTRY_POINT, [0])).toBeUndefined();
  });
});

describe('claiming the logs of one payment: all or none', () => {
  it('when one log is another request’s, the ones this claim wrote are removed again', async () => {
    const dir = tempDir('aw-claims-');
    const store = await openEmbeddedStore({ dir: join(dir, 'store'), fsync: false });
    try {
      const spec = (requestId: string) => ({ chain: 'base' as const, method: 'proof' as const, token: 'USDC', payer: OTHER, amountRaw: '1', apiClient: 'c', requestId, requestUid: `uid-${requestId}` });
      expect(await claimAll(store, 'default', [{ name: 'base-tx-1', spec: spec('r1') }])).toMatchObject({ claimed: true });
      const r = await claimAll(store, 'default', [
        { name: 'base-tx-0', spec: spec('r2') },
        { name: 'base-tx-1', spec: spec('r2') },
      ]);
      expect(r).toEqual({ claimed: false, usedBy: 'r1' });
      expect(await claimOf(store, 'default', 'base-tx-0')).toBeUndefined();
      // The same request made again under its name (a new uid) is another request: not paid by the first's claim.
      expect(await claimAll(store, 'default', [{ name: 'base-tx-1', spec: { ...spec('r1'), requestUid: 'uid-again' } }])).toEqual({ claimed: false, usedBy: 'r1' });
      expect(await claimAll(store, 'default', [{ name: 'base-tx-1', spec: spec('r1') }])).toEqual({ claimed: true, created: false });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
