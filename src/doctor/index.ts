import { privateKeyToAddress } from 'viem/accounts';
import { createChainClient } from '../chain/client.ts';
import { describeError } from '../chain/revert.ts';
import type { BundlerConfig, ChainConfig } from '../config/chainConfig.ts';
import { accountsCheck } from './checks/accounts.ts';
import { bundlerCheck } from './checks/bundler.ts';
import { sponsorCheck } from './checks/sponsor.ts';
import { chainIdCheck } from './checks/chainId.ts';
import { fallbackRpcsCheck } from './checks/fallbackRpcs.ts';
import { entryPointCheck, factoryCheck } from './checks/contracts.ts';
import { paymasterCheck } from './checks/paymaster.ts';
import { protocolsCheck } from './checks/protocols.ts';
import { rpcCheck } from './checks/rpc.ts';
import { tokensCheck } from './checks/tokens.ts';
import { result, shownUrl, type CheckContext, type CheckResult, type DoctorCheck, type DoctorTarget } from './types.ts';

export type { CheckResult, CheckStatus, DoctorCheck, DoctorTarget } from './types.ts';

/**
 * The checks, in the order they print. `chain.id` runs first and alone: a node that does not answer, or answers
 * for another chain, makes every other answer meaningless.
 */
export const CHECKS: readonly DoctorCheck[] = [chainIdCheck, fallbackRpcsCheck, rpcCheck, entryPointCheck, factoryCheck, paymasterCheck, accountsCheck, bundlerCheck, sponsorCheck, tokensCheck, protocolsCheck];

/**
 * The doctor's view of a full ChainConfig: the accounts' addresses from its keys. The bundler URL is read from an
 * outside bundler's configuration (`bundler: { kind: 'rpc', url }`) when the configuration has one.
 */
export function doctorTarget(config: ChainConfig): DoctorTarget {
  const { paymasterSignerKey, executorKeys, sendingAccounts, ...pub } = config;
  const address = (key: `0x${string}` | undefined) => (key === undefined ? undefined : privateKeyToAddress(key));
  return {
    config: pub,
    accounts: {
      paymasterSigner: address(paymasterSignerKey),
      executors: executorKeys.map((k) => privateKeyToAddress(k)),
      settler: address(sendingAccounts.x402SettlerKey),
      faucet: address(sendingAccounts.faucetKey),
    },
    bundlerUrl: outsideBundlerUrl(config.bundler),
  };
}

/** `bundler.url` when `bundler.kind` is 'rpc': read defensively, the field may not exist in this build's schema. */
export function outsideBundlerUrl(bundler: BundlerConfig): string | undefined {
  return bundler.kind === 'rpc' ? bundler.url : undefined;
}

export interface RunDoctorOptions {
  /** The checks to run; default CHECKS. */
  checks?: readonly DoctorCheck[];
  /** Per JSON-RPC request. */
  timeoutMs?: number;
}

/** Runs every check on every target (chains at once, checks of a chain one after another) and returns every result. */
export async function runDoctor(targets: readonly DoctorTarget[], opts: RunDoctorOptions = {}): Promise<CheckResult[]> {
  const perChain = await Promise.all(targets.map((t) => runChain(t, opts.checks ?? CHECKS, opts.timeoutMs ?? 10_000)));
  return perChain.flat();
}

async function runChain(target: DoctorTarget, checks: readonly DoctorCheck[], timeoutMs: number): Promise<CheckResult[]> {
  const client = createChainClient({ ...target.config, paymasterSignerKey: `0x${'00'.repeat(32)}`, executorKeys: [], sendingAccounts: {} } as ChainConfig, { timeoutMs });
  let fee: Promise<bigint> | undefined;
  const ctx: CheckContext = {
    target,
    client,
    rpc: (method, params) => client.request({ method, params } as never),
    maxFeePerGas: () => (fee ??= client.estimateFeesPerGas().then((f) => f.maxFeePerGas ?? f.gasPrice ?? 0n)),
  };
  try {
    await ctx.rpc('eth_blockNumber', []);
  } catch (e) {
    return [
      result(ctx, 'rpc.reachable', 'fail', `${shownUrl(target.config.rpcUrl)} does not answer (${firstLine(describeError(e))}); no other check ran`, `check the chain's RPC URL (rpcUrl, --rpc-url or AGENT_WALLET_RPC_URL), its API key and that this host can reach it`),
    ];
  }
  const out: CheckResult[] = [];
  for (const check of checks) {
    try {
      const results = await check.run(ctx);
      out.push(...results);
      // Another chain's answers would mislead every later check.
      if (check === chainIdCheck && results.some((r) => r.status === 'fail')) break;
    } catch (e) {
      out.push(result(ctx, check.id, 'fail', `the check could not finish: ${firstLine(describeError(e))}`, 'see the error; run the doctor again when the RPC endpoint answers'));
    }
  }
  return out;
}

const firstLine = (s: string) => s.split('\n')[0]!;

/** Whether the configuration may serve: no check failed. */
export const healthy = (results: readonly CheckResult[]): boolean => results.every((r) => r.status !== 'fail');
