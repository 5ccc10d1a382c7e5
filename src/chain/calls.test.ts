import { describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { simpleAccountAbi } from './abi.ts';
import { encodeWalletCallData } from './calls.ts';

const A = '0x00000000000000000000000000000000000000aa';
const B = '0x00000000000000000000000000000000000000bb';

describe('encodeWalletCallData', () => {
  it('matches viem encodeFunctionData of SimpleAccount execute / executeBatch', () => {
    expect(encodeWalletCallData([{ target: A, value: 7n, data: '0x1234' }])).toBe(
      encodeFunctionData({ abi: simpleAccountAbi, functionName: 'execute', args: [A, 7n, '0x1234'] }),
    );
    expect(
      encodeWalletCallData([
        { target: A, value: 0n, data: '0x' },
        { target: B, value: 0n, data: '0xabcd' },
      ]),
    ).toBe(encodeFunctionData({ abi: simpleAccountAbi, functionName: 'executeBatch', args: [[A, B], [], ['0x', '0xabcd']] }));
    expect(
      encodeWalletCallData([
        { target: A, value: 1n, data: '0x' },
        { target: B, value: 0n, data: '0x' },
      ]),
    ).toBe(encodeFunctionData({ abi: simpleAccountAbi, functionName: 'executeBatch', args: [[A, B], [1n, 0n], ['0x', '0x']] }));
  });
});
