import { describe, expect, it } from 'vitest';
import { encodeFunctionData, type Hex } from 'viem';
import type { PackedUserOperation } from 'viem/account-abstraction';
import { entryPoint07Abi } from '../abi.ts';
import { encodeHandleOps } from './bundleSimulation.ts';

const packed = (i: number): PackedUserOperation => ({
  sender: `0x${String(i).padStart(40, '1')}`,
  nonce: BigInt(i),
  initCode: i === 0 ? `0x${'ab'.repeat(88)}` : '0x',
  callData: `0xb61d27f6${'00'.repeat(31)}${String(i).padStart(2, '0')}`,
  accountGasLimits: `0x${'00'.repeat(14)}0111${'00'.repeat(15)}70`,
  preVerificationGas: 48_000n + BigInt(i),
  gasFees: `0x${'00'.repeat(31)}01`,
  paymasterAndData: `0x${'cd'.repeat(20 + 32 + 65)}`,
  signature: `0x${'ef'.repeat(65)}` as Hex,
});

describe('encodeHandleOps', () => {
  it('is exactly viem encodeFunctionData of EntryPoint v0.7 handleOps, for one operation and many', () => {
    const beneficiary = '0x00000000000000000000000000000000000000aa';
    for (const ops of [[packed(0)], Array.from({ length: 7 }, (_, i) => packed(i)), []]) {
      expect(encodeHandleOps(ops, beneficiary)).toBe(encodeFunctionData({ abi: entryPoint07Abi, functionName: 'handleOps', args: [ops, beneficiary] }));
    }
  });
});
