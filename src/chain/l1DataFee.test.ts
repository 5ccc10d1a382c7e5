import { describe, expect, it } from 'vitest';
import { parseTransaction, size, type Address } from 'viem';
import type { PackedUserOperation } from 'viem/account-abstraction';
import { ChainConfigSchema, l1DataFeeOf } from '../config/chainConfig.ts';
import { bundledGasLimits, GAS, handleOpsGasLimit, preVerificationGasFor, type OperationGasLimits } from './gas.ts';
import { handleOpsTransactionFor, operationGasPrice, opStackL1Gas } from './l1DataFee.ts';

const gwei = 10n ** 9n;

const packed: PackedUserOperation = {
  sender: '0x1111111111111111111111111111111111111111',
  nonce: 5n,
  initCode: '0x',
  callData: '0xd09de08a',
  accountGasLimits: `0x${(70_000).toString(16).padStart(32, '0')}${(60_000).toString(16).padStart(32, '0')}`,
  preVerificationGas: 1_000_000n,
  gasFees: `0x${(2n * gwei).toString(16).padStart(32, '0')}${gwei.toString(16).padStart(32, '0')}`,
  paymasterAndData: '0x',
  signature: `0x${'ab'.repeat(65)}`,
};

describe('L1 data fee as gas (OP-stack)', () => {
  it('divides by the price the operation pays: min(maxFeePerGas, baseFee + tip), rounded up', () => {
    // base fee + tip = 0.5 + 1 = 1.5 gwei < max fee 2 gwei → price 1.5 gwei
    const fees = { maxFeePerGas: 2n * gwei, maxPriorityFeePerGas: gwei, baseFeePerGas: gwei / 2n };
    expect(operationGasPrice(fees)).toBe(1_500_000_000n);
    // 3.5e12 wei / 1.5e9 = 2333.33… → 2334; one wei more than an exact multiple rounds up too
    expect(opStackL1Gas(3_500_000_000_000n, fees)).toBe(2334n);
    expect(opStackL1Gas(3_000_000_000_000n, fees)).toBe(2000n);
    expect(opStackL1Gas(3_000_000_000_001n, fees)).toBe(2001n);
    // base fee + tip = 3 + 1 = 4 gwei > max fee 2 gwei → price 2 gwei: 3e12 / 2e9 = 1500
    expect(opStackL1Gas(3_000_000_000_000n, { ...fees, baseFeePerGas: 3n * gwei })).toBe(1500n);
    expect(opStackL1Gas(0n, fees)).toBe(0n);
  });
});

describe('the handleOps transaction priced for L1', () => {
  it('is a signed EIP-1559 handleOps of the operation alone, with placeholders no real value outgrows', () => {
    const entryPoint: Address = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';
    const tx = handleOpsTransactionFor({ chainId: 84532, entryPoint, beneficiary: '0x2222222222222222222222222222222222222222', packed });
    const parsed = parseTransaction(tx);
    expect(parsed.type).toBe('eip1559');
    expect(parsed.to?.toLowerCase()).toBe(entryPoint.toLowerCase());
    expect(parsed.chainId).toBe(84532);
    expect(parsed.data?.slice(0, 10)).toBe('0x765e827f'); // handleOps((…)[],address)
    expect(parsed.maxFeePerGas).toBe(2n ** 64n - 1n);
    expect(parsed.r).toBe(`0x${'ff'.repeat(32)}`);
    // The envelope around the calldata: type byte, list headers, chain id, nonce, fees, gas, to, value, access list, y, r, s.
    expect(size(tx) - size(parsed.data!)).toBeGreaterThan(100);
  });
});

describe('the bundle gas limit and the L1 part', () => {
  const l2Pvg = preVerificationGasFor(packed);
  const op = (l1: bigint): OperationGasLimits => ({
    callGasLimit: 60_000n,
    verificationGasLimit: GAS.verification,
    preVerificationGas: l2Pvg + l1,
    paymasterVerificationGasLimit: GAS.paymasterVerification,
    paymasterPostOpGasLimit: 0n,
  });

  it('on OP-stack counts only the L2 part of PVG: the L1 fee is not gas', () => {
    const withL1 = op(1_000_000n);
    expect(bundledGasLimits(withL1, packed, true).preVerificationGas).toBe(l2Pvg);
    // Never more than the operation's own PVG.
    expect(bundledGasLimits(op(0n), packed, true).preVerificationGas).toBe(l2Pvg);
    // 32 operations with 1M gas of L1 fee each: 32M counted would pass EIP-7825's 2^24 cap; without it, far under.
    const bundle = Array.from({ length: 32 }, () => bundledGasLimits(withL1, packed, true));
    expect(handleOpsGasLimit(bundle)).toBeLessThan(GAS.maxTransactionGas);
    expect(handleOpsGasLimit(Array.from({ length: 32 }, () => withL1))).toBeGreaterThan(GAS.maxTransactionGas);
  });

  it('on Arbitrum keeps the whole PVG: Nitro charges the L1 part within the gas limit', () => {
    const withL1 = op(1_000_000n);
    expect(bundledGasLimits(withL1, packed, false)).toBe(withL1);
  });
});

describe('l1DataFee configuration', () => {
  const minimal = (name: string, extra: object = {}) =>
    ChainConfigSchema.parse({
      name,
      chainId: 1,
      rpcUrl: 'http://127.0.0.1:8545',
      entryPoint: '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
      simpleAccountFactory: '0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985',
      paymaster: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
      paymasterSignerKey: `0x${'11'.repeat(32)}`,
      executorKeys: [`0x${'22'.repeat(32)}`],
      beneficiary: '0x2222222222222222222222222222222222222222',
      treasury: '0x2222222222222222222222222222222222222222',
      tokens: [],
      ...extra,
    });

  it('defaults by the network the chain name stands for', () => {
    expect(l1DataFeeOf(minimal('ethereum'))).toEqual({ kind: 'none' });
    expect(l1DataFeeOf(minimal('base'))).toEqual({ kind: 'opStack', gasPriceOracle: '0x420000000000000000000000000000000000000F', method: 'getL1Fee' });
    expect(l1DataFeeOf(minimal('arbitrum'))).toEqual({ kind: 'arbitrum', nodeInterface: '0x00000000000000000000000000000000000000C8' });
  });

  it('takes an explicit setting, the predeploy addresses as defaults, and refuses an unknown kind', () => {
    expect(l1DataFeeOf(minimal('base', { l1DataFee: { kind: 'none' } }))).toEqual({ kind: 'none' });
    expect(minimal('ethereum', { l1DataFee: { kind: 'opStack' } }).l1DataFee).toEqual({ kind: 'opStack', gasPriceOracle: '0x420000000000000000000000000000000000000F', method: 'getL1Fee' });
    expect(() => minimal('base', { l1DataFee: { kind: 'scroll' } })).toThrow();
    expect(() => minimal('base', { l1DataFee: { kind: 'opStack', nodeInterface: '0x00000000000000000000000000000000000000C8' } })).toThrow();
  });
});
