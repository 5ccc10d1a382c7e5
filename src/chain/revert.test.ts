import { describe, expect, it } from 'vitest';
import { encodeErrorResult, parseAbi } from 'viem';
import { entryPoint07Abi } from './abi.ts';
import { decodeRevert, extractRevertData, isExecutionRevert } from './revert.ts';

const errorAbi = parseAbi(['error Error(string)', 'error Panic(uint256)', 'error Unauthorized(address who, uint256 amount)']);

describe('decodeRevert', () => {
  it('surfaces an Error(string) message', () => {
    const data = encodeErrorResult({ abi: errorAbi, errorName: 'Error', args: ['Counter: forced failure'] });
    expect(decodeRevert(data)).toMatchObject({ reason: 'Counter: forced failure', selector: '0x08c379a0', data });
  });

  it('describes a Panic code', () => {
    const data = encodeErrorResult({ abi: errorAbi, errorName: 'Panic', args: [0x11n] });
    expect(decodeRevert(data).reason).toBe('panic 0x11: arithmetic overflow or underflow');
    expect(decodeRevert(encodeErrorResult({ abi: errorAbi, errorName: 'Panic', args: [0x99n] })).reason).toBe('panic 0x99: unknown panic code');
  });

  it('names a custom error from a given ABI, else keeps its selector and raw data', () => {
    const data = encodeErrorResult({
      abi: errorAbi,
      errorName: 'Unauthorized',
      args: ['0x0000000000000000000000000000000000000001', 5n],
    });
    expect(decodeRevert(data, [errorAbi])).toMatchObject({
      reason: 'Unauthorized(0x0000000000000000000000000000000000000001, 5)',
      errorName: 'Unauthorized',
    });
    const unknown = decodeRevert(data);
    expect(unknown.reason).toBe(`custom error ${data.slice(0, 10)}`);
    expect(unknown.selector).toBe(data.slice(0, 10));
    expect(unknown.data).toBe(data);
  });

  it('decodes the EntryPoint FailedOp with its ABI', () => {
    const data = encodeErrorResult({ abi: entryPoint07Abi, errorName: 'FailedOp', args: [3n, 'AA24 signature error'] });
    expect(decodeRevert(data, [entryPoint07Abi]).reason).toBe('FailedOp(3, "AA24 signature error")');
  });

  it('reports empty data as a revert without a reason', () => {
    expect(decodeRevert('0x').reason).toBe('reverted without a reason');
  });
});

describe('extractRevertData / isExecutionRevert', () => {
  it('finds data deep in a cause chain and tells reverts from outages', () => {
    const nested = new Error('outer', { cause: new Error('mid', { cause: Object.assign(new Error('rpc'), { code: 3, data: '0x1234' }) }) });
    expect(extractRevertData(nested)).toBe('0x1234');
    expect(isExecutionRevert(nested)).toBe(true);
    const outage = new Error('fetch failed', { cause: Object.assign(new Error('ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    expect(extractRevertData(outage)).toBeUndefined();
    expect(isExecutionRevert(outage)).toBe(false);
  });
});
