import { encodeFunctionData, parseAbi } from 'viem';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/env.ts';
import { encodeCall } from './abiArgs.ts';

const A = '0x5FbDB2315678afecb367f032d93F642f64180aa3';

describe('encodeCall: calldata from a signature or an ABI file and text arguments', () => {
  it('reads each argument by its ABI type, as viem encodes it', () => {
    const sig = 'function f(uint256 a, int8 b, bool c, address d, bytes e, string s)';
    expect(encodeCall(sig, 'f', ['1000000000000000000000', '-5', 'true', A, '0xbeef', 'hi'])).toBe(
      encodeFunctionData({ abi: parseAbi([sig]), functionName: 'f', args: [10n ** 21n, -5, true, A, '0xbeef', 'hi'] }),
    );
    expect(encodeCall('function g(uint256 x)', 'g', ['0x10'])).toBe(encodeFunctionData({ abi: parseAbi(['function g(uint256 x)']), functionName: 'g', args: [16n] }));
  });

  it('arrays and tuples are JSON; overloads are told apart by argument count; a JSON ABI file or artifact works', () => {
    const abi = parseAbi(['function h(uint256[] xs, (address to, uint128 amount) p)', 'function h(uint256 x)']);
    expect(encodeCall('function h(uint256[] xs, (address to, uint128 amount) p); function h(uint256 x)', 'h', ['[1,"2"]', JSON.stringify({ to: A, amount: '7' })])).toBe(
      encodeFunctionData({ abi, functionName: 'h', args: [[1n, 2n], { to: A, amount: 7n }] }),
    );
    const file = join(tempDir('aw-abi-'), 'Thing.json');
    writeFileSync(file, JSON.stringify({ contractName: 'Thing', abi }));
    expect(encodeCall(file, 'h', ['3'])).toBe(encodeFunctionData({ abi, functionName: 'h', args: [3n] }));
  });

  it('says what is wrong: unknown function, wrong count, a value that is not of its type', () => {
    expect(() => encodeCall('function g(uint256 x)', 'nope', [])).toThrow(/not in the ABI \(functions: g\)/);
    expect(() => encodeCall('function g(uint256 x)', 'g', [])).toThrow(/takes 1 arguments, got 0/);
    expect(() => encodeCall('function g(uint256 x)', 'g', ['1.5'])).toThrow(/x must be an integer/);
    expect(() => encodeCall('function g(bool x)', 'g', ['yes'])).toThrow(/true or false/);
    expect(() => encodeCall('function g(uint256[] x)', 'g', ['1,2'])).toThrow(/must be JSON/);
    expect(() => encodeCall('/no/such/file.json', 'g', [])).toThrow(/JSON ABI file/);
  });
});
