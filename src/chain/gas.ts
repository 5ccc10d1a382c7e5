import { encodeAbiParameters, type Hex } from 'viem';
import type { PackedUserOperation } from 'viem/account-abstraction';

/** The five gas fields of a sponsored v0.7 UserOperation. */
export interface OperationGasLimits {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
}

/**
 * Fixed validation limits. gas.test.ts measures what validation really takes on the devnet (single-operation
 * bundle, all cold: the worst case) and requires these to keep ≥ 1.5× headroom. Measured with the v0.7
 * EntryPoint, SimpleAccount and VerifyingPaymaster: 24.4k for a deployed wallet, 193.7k with the deployment,
 * 17.7k for the paymaster. Unused verification gas is not charged in v0.7, so headroom costs nothing but
 * prefund; unused call gas is charged at 10%, so the call limit tracks its estimate closely instead.
 */
export const GAS = {
  /** Account validation of a deployed SimpleAccount: userOpHash, ECDSA recover, nonce update. */
  verification: 70_000n,
  /** First operation: the proxy deployment through the factory, then the validation. */
  verificationWithDeployment: 350_000n,
  /** VerifyingPaymaster validation: getHash, ECDSA recover, deposit update. */
  paymasterVerification: 45_000n,
  /** VerifyingPaymaster returns an empty context: postOp is never called. */
  paymasterPostOp: 0n,
  /**
   * Simulation of an undeployed wallet runs the implementation's code directly at the wallet address; the
   * real wallet is an ERC-1967 proxy that adds a delegatecall, a cold implementation-slot read and a cold
   * account access (≈ 2.6k + 2.1k + overhead).
   */
  proxyOverhead: 7_000n,
  /** Per-operation share of the bundle transaction not metered by the EntryPoint (base cost, loop, events). */
  preVerificationOverhead: 12_000n,
  /**
   * Margin on the estimated call gas: +10% and a fixed 20k. The fixed part covers what a call costs more when it
   * lands a second after its estimate: lending protocols accrue interest only when time has passed since their last
   * update (Comet ≈ 7k more, Morpho Blue ≈ 14k with its rate model's call, measured on the devnet), so a call
   * estimated in the same second as that update runs out of gas a second later with a small margin. EntryPoint
   * v0.7 charges 10 % of unused call gas only past 40k unused: most operations pay nothing for it.
   */
  callGasMarginPercent: 10n,
  callGasMarginFixed: 20_000n,
  /** EIP-7825 (Osaka) caps one transaction at 2^24 gas; a bundle stays under it on every chain. */
  maxTransactionGas: 16_777_216n,
} as const;

const ZERO = 0x30; // '0'

/**
 * Intrinsic calldata gas: 16 per non-zero byte, 4 per zero byte. Counted on the hex string itself: no byte
 * array, no bigint per byte (this runs twice per operation, over its whole packed encoding).
 */
export function calldataGas(data: Hex): bigint {
  let zeros = 0;
  const bytes = (data.length - 2) >> 1;
  for (let i = 2; i + 1 < data.length; i += 2) if (data.charCodeAt(i) === ZERO && data.charCodeAt(i + 1) === ZERO) zeros++;
  return BigInt(zeros * 4 + (bytes - zeros) * 16);
}

/** An eth_estimateGas of a call minus its intrinsic cost (21000 + calldata): the gas of the called frame. */
export function walletFrameGas(estimate: bigint, callData: Hex): bigint {
  const intrinsic = 21_000n + calldataGas(callData);
  return estimate > intrinsic ? estimate - intrinsic : 0n;
}

/**
 * The wallet frame's gas from an eth_estimateGas of the call sent from the EntryPoint: the estimate minus the
 * transaction's intrinsic cost (21000 + calldata), plus the proxy overhead when it was simulated without the
 * proxy, plus a margin.
 */
export function callGasLimitFromEstimate(estimate: bigint, callData: Hex, simulatedWithoutProxy: boolean): bigint {
  let gas = walletFrameGas(estimate, callData);
  if (simulatedWithoutProxy) gas += GAS.proxyOverhead;
  return gas + (gas * GAS.callGasMarginPercent) / 100n + GAS.callGasMarginFixed;
}

const packedUserOperationType = {
  type: 'tuple',
  components: [
    { name: 'sender', type: 'address' },
    { name: 'nonce', type: 'uint256' },
    { name: 'initCode', type: 'bytes' },
    { name: 'callData', type: 'bytes' },
    { name: 'accountGasLimits', type: 'bytes32' },
    { name: 'preVerificationGas', type: 'uint256' },
    { name: 'gasFees', type: 'bytes32' },
    { name: 'paymasterAndData', type: 'bytes' },
    { name: 'signature', type: 'bytes' },
  ],
} as const;

/**
 * preVerificationGas on L1: the calldata cost of the operation inside handleOps plus a fixed per-operation share
 * of the bundle's unmetered overhead. `packed` must carry signatures of their final size (dummies are fine). On an
 * L2 the operation's PVG adds its L1 data fee as gas (l1DataFee.ts).
 */
export function preVerificationGasFor(packed: PackedUserOperation): bigint {
  const encoded = encodeAbiParameters([packedUserOperationType], [packed]);
  return calldataGas(encoded) + GAS.preVerificationOverhead;
}

/** The most gas one operation may consume on chain (PVG is a payment, not consumed gas, but counts here too). */
export const totalOperationGas = (g: OperationGasLimits): bigint =>
  g.callGasLimit + g.verificationGasLimit + g.preVerificationGas + g.paymasterVerificationGasLimit + g.paymasterPostOpGasLimit;

/**
 * An operation's limits as a bundle transaction must hold them. Where the L1 data fee is paid apart from gas
 * (OP-stack), the L1 part of preVerificationGas is no gas the transaction uses: only the L2 part counts (its
 * calldata and overhead, recomputed from the packed operation, never above the operation's own PVG), so an L1
 * fee neither pushes a bundle past EIP-7825's cap nor makes bundles smaller. Where it is charged as gas
 * (Arbitrum), the whole PVG stays.
 */
export function bundledGasLimits(gas: OperationGasLimits, packed: PackedUserOperation, l1FeeApartFromGas: boolean): OperationGasLimits {
  if (!l1FeeApartFromGas) return gas;
  const l2 = preVerificationGasFor(packed);
  return l2 < gas.preVerificationGas ? { ...gas, preVerificationGas: l2 } : gas;
}

/**
 * Gas for handleOps: above the sum of the operations' limits, or the EntryPoint aborts with AA95 (it checks
 * gasleft() * 63/64 against callGasLimit + postOp + 10000 before each inner call). preVerificationGas covers
 * each operation's calldata; a fixed 50k covers the transaction's base cost and the compensation transfer.
 */
export function handleOpsGasLimit(ops: readonly OperationGasLimits[]): bigint {
  let gas = 50_000n;
  for (const g of ops) {
    gas += g.verificationGasLimit + g.paymasterVerificationGasLimit + g.preVerificationGas;
    gas += ((g.callGasLimit + g.paymasterPostOpGasLimit + 10_000n) * 64n) / 63n + 5_000n;
  }
  return gas;
}
