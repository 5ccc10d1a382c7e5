import { concat, type Address } from 'viem';
import type { PackedUserOperation } from 'viem/account-abstraction';
import type { Call } from '../../api/v1alpha1/index.ts';
import { l1DataFeeOf, type ChainConfig } from '../../config/chainConfig.ts';
import { err, ok, type Result } from '../../lib/result.ts';
import { encodeWalletCallData, toWalletCalls, type WalletCall } from '../calls.ts';
import type { ChainClient } from '../client.ts';
import type { FeeSnapshot } from '../fees.ts';
import { GAS, preVerificationGasFor, totalOperationGas, type OperationGasLimits } from '../gas.ts';
import { createL1DataGasReader, type OperationFees } from '../l1DataFee.ts';
import { DUMMY_SIGNATURE, encodeSponsorshipWindow } from '../paymaster.ts';
import { describeError } from '../revert.ts';
import { ChainError, rethrowAsRpcUnavailable } from '../errors.ts';
import { MAX_READ_CALLS } from './reads.ts';
import { simulateCalls, type CallsSimulation } from '../simulate.ts';
import { observeCalls } from '../observe.ts';
import { simulateOutflows } from '../simulateOutflows.ts';
import type { SimulateOptions, SimulationFailure, SimulationResult, WalletRef } from '../types.ts';
import { encodeFactoryData, packUserOperation } from '../userOperation.ts';
import type { ResolvedWallet, WalletResolver } from '../wallet.ts';
import type { SponsorFields } from '../sponsor/index.ts';

/** Estimates kept; the oldest goes first. */
const MAX_ESTIMATES = 10_000;

export interface OperationEstimatesDeps {
  client: ChainClient;
  config: ChainConfig;
  wallets: WalletResolver;
  fees: () => Promise<FeeSnapshot>;
  /** A simulation's call-gas estimate is reused by prepare for this long. */
  reuseMs: number;
  /**
   * With an outside bundler: its preVerificationGas for one the service estimates at `ours`, as it last priced one
   * (rpc/gasAdvice.ts), so a quote counts what the signed operation will carry. Absent: the service's own.
   */
  bundlerPreVerificationGas?: (ours: bigint) => bigint;
}

export interface OperationEstimates {
  /** The calls as the wallet would run them, with the gas and cost of the whole operation (the `simulate` answer). */
  simulate(ref: WalletRef, calls: readonly Call[], opts?: SimulateOptions): Promise<Result<SimulationResult, SimulationFailure>>;
  /**
   * The simulation an operation is signed with: the one `simulate` made of the same calls moments ago (an
   * execute simulates, then prepares: one estimate instead of two), else a fresh one.
   */
  forSigning(wallet: ResolvedWallet, calls: readonly WalletCall[]): Promise<Result<CallsSimulation, SimulationFailure>>;
  /**
   * Gas limits of the operation that would carry `sim`: fixed validation limits, PVG from its packed size plus, on
   * an L2, its L1 data fee as gas at `fees` (`l1DataGas`, l1DataFee.ts). Throws `rpc_unavailable` when the L2's
   * fee oracle does not answer.
   */
  gasLimits(p: GasLimitsParams): Promise<OperationGasLimitsWithL1>;
}

export interface GasLimitsParams {
  wallet: ResolvedWallet;
  sim: CallsSimulation;
  deploying: boolean;
  nonce: bigint;
  fees: OperationFees;
  /** The sponsor's stub (its paymaster data's size, its gas limits); absent: the built-in VerifyingPaymaster's. */
  sponsor?: SponsorFields;
}

/** The part of preVerificationGas that pays the L2's L1 data fee; absent on a chain without one. */
export type OperationGasLimitsWithL1 = OperationGasLimits & { l1DataGas?: bigint };

/** Call-gas estimates (eth_call + eth_estimateGas from the EntryPoint, see simulate.ts) and the gas limits built on them. */
export function createOperationEstimates(deps: OperationEstimatesDeps): OperationEstimates {
  const { client, config, wallets } = deps;
  const l1DataGas = createL1DataGasReader(client, { ...config, l1DataFee: l1DataFeeOf(config) });
  const recent = new Map<string, { at: number; sim: CallsSimulation }>();
  const keyOf = (sender: Address, calls: readonly WalletCall[]) => `${sender}|${calls.map((c) => `${c.target}:${c.value}:${c.data}`).join('|')}`;

  async function estimate(wallet: ResolvedWallet, calls: readonly WalletCall[]): Promise<Result<CallsSimulation, SimulationFailure>> {
    const r = await simulateCalls(client, {
      entryPoint: config.entryPoint,
      sender: wallet.address,
      deployed: wallet.deployed,
      implementationCode: () => wallets.implementationCode(),
      calls,
    });
    if (r.ok) {
      recent.set(keyOf(wallet.address, calls), { at: Date.now(), sim: r.value });
      if (recent.size > MAX_ESTIMATES) recent.delete(recent.keys().next().value as string);
    }
    return r;
  }

  async function gasLimits(p: GasLimitsParams): Promise<OperationGasLimitsWithL1> {
    const { gas, packed } = l2GasLimits(config, p);
    const l1 = await l1DataGas({ packed, fees: p.fees }).catch(rethrowAsRpcUnavailable);
    if (!l1) return gas;
    return { ...gas, preVerificationGas: gas.preVerificationGas + l1.gas, l1DataGas: l1.gas };
  }

  return {
    async simulate(ref, calls, opts = {}) {
      const walletCalls = toWalletCalls(calls);
      const reads = opts.observe ?? [];
      if (reads.length > MAX_READ_CALLS) {
        throw new ChainError('invalid_request', `a simulation observes at most ${MAX_READ_CALLS} reads, got ${reads.length}`);
      }
      let wallet: ResolvedWallet;
      let feeSnapshot: FeeSnapshot;
      try {
        [wallet, feeSnapshot] = await Promise.all([wallets.resolve(ref), deps.fees()]);
      } catch (e) {
        return err({ code: 'rpc_unavailable', message: `the chain did not answer: ${describeError(e)}` });
      }
      // The observation and the outflows run beside the estimate (one more call each, in the same JSON-RPC batch).
      const [r, observed, outflows] = await Promise.all([
        estimate(wallet, walletCalls),
        reads.length === 0
          ? undefined
          : observeCalls(client, {
              entryPoint: config.entryPoint,
              sender: wallet.address,
              deployed: wallet.deployed,
              implementationCode: () => wallets.implementationCode(),
              calls: walletCalls,
              reads,
            }),
        !opts.outflows
          ? undefined
          : simulateOutflows(client, {
              entryPoint: config.entryPoint,
              sender: wallet.address,
              deployed: wallet.deployed,
              implementationCode: () => wallets.implementationCode(),
              callData: encodeWalletCallData(walletCalls),
              callCount: walletCalls.length,
            }),
      ]);
      if (!r.ok) return r;
      if (observed && !observed.ok) return observed;
      if (outflows && !outflows.ok) return outflows;
      let gas: OperationGasLimitsWithL1;
      try {
        gas = await gasLimits({ wallet, sim: r.value, deploying: !wallet.deployed, nonce: 0n, fees: feeSnapshot });
      } catch (e) {
        return err({ code: 'rpc_unavailable', message: describeError(e) });
      }
      if (deps.bundlerPreVerificationGas) {
        const asked = deps.bundlerPreVerificationGas(gas.preVerificationGas);
        if (asked > gas.preVerificationGas) gas = { ...gas, preVerificationGas: asked };
      }
      const estimatedGas = totalOperationGas(gas);
      const estimatedCostWei = estimatedGas * feeSnapshot.maxFeePerGas;
      return ok({
        wallet: { address: wallet.address, deployed: wallet.deployed },
        estimatedGas,
        callGas: r.value.walletGas,
        maxFeePerGas: feeSnapshot.maxFeePerGas,
        estimatedCostWei,
        estimatedCostUsd: weiToUsd(estimatedCostWei, config.nativeUsdPrice),
        // The L1 data fee's share of the figures above (both already include it).
        ...(gas.l1DataGas !== undefined && { l1Data: { gas: gas.l1DataGas, costWei: gas.l1DataGas * feeSnapshot.maxFeePerGas } }),
        ...(observed && { observed: observed.value }),
        ...(outflows && ('outflows' in outflows.value ? { outflows: outflows.value.outflows } : { outflowsUnavailable: outflows.value.unavailable })),
      });
    },

    async forSigning(wallet, calls) {
      const cached = recent.get(keyOf(wallet.address, calls));
      if (cached && Date.now() - cached.at <= deps.reuseMs) return ok(cached.sim);
      return estimate(wallet, calls);
    },

    gasLimits,
  };
}

/**
 * The operation's limits without an L1 data fee, and the packed operation they are sized on (with placeholder
 * signatures and paymaster data of their final size): fixed validation limits, PVG from its packed size.
 */
export function l2GasLimits(
  config: Pick<ChainConfig, 'simpleAccountFactory' | 'paymaster'>,
  p: Omit<GasLimitsParams, 'fees'> & { fees: Pick<OperationFees, 'maxFeePerGas'> },
): { gas: OperationGasLimits; packed: PackedUserOperation } {
  const gas: OperationGasLimits = {
    callGasLimit: p.sim.callGasLimit,
    verificationGasLimit: p.deploying ? GAS.verificationWithDeployment : GAS.verification,
    preVerificationGas: 0n,
    paymasterVerificationGasLimit: p.sponsor?.paymasterVerificationGasLimit ?? GAS.paymasterVerification,
    paymasterPostOpGasLimit: p.sponsor?.paymasterPostOpGasLimit ?? GAS.paymasterPostOp,
  };
  const packed = packUserOperation({
    sender: p.wallet.address,
    nonce: p.nonce,
    ...(p.deploying && { factory: config.simpleAccountFactory, factoryData: encodeFactoryData(p.wallet.owner.address, p.wallet.salt) }),
    callData: p.sim.callData,
    ...gas,
    preVerificationGas: 1_000_000n,
    maxFeePerGas: p.fees.maxFeePerGas,
    maxPriorityFeePerGas: p.fees.maxFeePerGas,
    paymaster: p.sponsor?.paymaster ?? config.paymaster,
    paymasterData: p.sponsor?.paymasterData ?? concat([encodeSponsorshipWindow({ validUntil: 2 ** 40, validAfter: 0 }), DUMMY_SIGNATURE]),
    signature: DUMMY_SIGNATURE,
  });
  gas.preVerificationGas = preVerificationGasFor(packed);
  return { gas, packed };
}

/** Wei → USD at a configured price, rounded to micro-dollars. */
export function weiToUsd(wei: bigint, usdPerNative: number): number {
  const microUsd = (wei * BigInt(Math.round(usdPerNative * 1e6))) / 10n ** 18n;
  return Number(microUsd) / 1e6;
}
