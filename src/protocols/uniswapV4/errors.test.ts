import { encodeErrorResult, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { swapErrorsAbi } from './abi.ts';
import { decodeUniswapV4Revert } from './errors.ts';

const err = (errorName: string, args?: readonly unknown[]): Hex => encodeErrorResult({ abi: swapErrorsAbi, errorName, args } as never);

describe('pool-b-v4 decodeRevert', () => {
  it('names the router’s slippage and deadline errors in words', () => {
    expect(decodeUniswapV4Revert(err('V4TooLittleReceived', [100n, 99n]))).toEqual({
      name: 'V4TooLittleReceived',
      message: 'the swap would return 99, less than the minimum 100 (amount_out_minimum): the price moved past the slippage allowed',
    });
    expect(decodeUniswapV4Revert(err('V4TooMuchRequested', [100n, 101n]))?.message).toMatch(/take 101, more than the maximum 100/);
    expect(decodeUniswapV4Revert(err('TransactionDeadlinePassed'))).toEqual({ name: 'TransactionDeadlinePassed', message: 'the deadline passed before the swap was mined' });
    expect(decodeUniswapV4Revert(err('AllowanceExpired', [5n]))?.name).toBe('AllowanceExpired');
    expect(decodeUniswapV4Revert(err('InsufficientAllowance', [7n]))?.message).toMatch(/Permit2 allowance \(7\)/);
  });

  it('unwraps ExecutionFailed and WrappedError to the error inside', () => {
    const inner = err('V4TooLittleReceived', [2n, 1n]);
    const wrapped = err('ExecutionFailed', [0n, inner]);
    expect(decodeUniswapV4Revert(wrapped)).toMatchObject({ name: 'V4TooLittleReceived', message: expect.stringMatching(/\(router command 0\)$/) });
    const hook = err('WrappedError', ['0x00000000000000000000000000000000000000bb', '0x12345678', err('PoolNotInitialized'), '0x']);
    expect(decodeUniswapV4Revert(hook)).toMatchObject({ name: 'PoolNotInitialized', message: expect.stringMatching(/0x00000000000000000000000000000000000000bb/) });
  });

  it('leaves what it does not know to the generic decoding', () => {
    expect(decodeUniswapV4Revert('0x')).toBeUndefined();
    expect(decodeUniswapV4Revert('0xdeadbeef')).toBeUndefined();
  });
});
