import type { Address, Hex } from 'viem';
import type { ChainClient } from '../chain/client.ts';
import type { ChainConfig } from '../config/chainConfig.ts';

/** ok: as the service needs it; warn: it serves, with something degraded or about to run out; fail: fix before serving. */
export type CheckStatus = 'ok' | 'warn' | 'fail';

/** What one check found on one chain: `fix` says what to do when the status is not ok (empty when it is). */
export interface CheckResult {
  /** Stable, dotted: `paymaster.deposit`, `rpc.eth_simulateV1`. */
  id: string;
  chain: string;
  status: CheckStatus;
  detail: string;
  fix: string;
}

/**
 * One chain as the doctor checks it: the public configuration the service would run with, and the addresses of
 * its accounts (from the keys when they are given; the doctor never needs a key itself).
 */
export interface DoctorTarget {
  config: Omit<ChainConfig, 'paymasterSignerKey' | 'executorKeys' | 'sendingAccounts'>;
  accounts: {
    /** The paymaster's expected verifyingSigner (the address of the paymaster signer key), when known. */
    paymasterSigner?: Address | undefined;
    executors: readonly Address[];
    settler?: Address | undefined;
    faucet?: Address | undefined;
  };
  /**
   * An external ERC-4337 bundler's JSON-RPC URL (`bundler.kind: 'rpc'`); undefined: the built-in bundler, whose
   * executors send the bundles.
   */
  bundlerUrl?: string | undefined;
}

/** What a check runs with: its chain's target, a read client and the raw JSON-RPC call (errors as thrown by viem). */
export interface CheckContext {
  target: DoctorTarget;
  client: ChainClient;
  rpc(method: string, params: unknown[]): Promise<unknown>;
  /** The fees of the latest block (read once per chain): thresholds of balances are counted in bundles at them. */
  maxFeePerGas(): Promise<bigint>;
}

/** One check of the registry: one concern, one or more results (one per account, per contract…). */
export interface DoctorCheck {
  /** The id prefix of its results, e.g. `paymaster`. */
  id: string;
  /** One line for the help and the docs. */
  summary: string;
  run(ctx: CheckContext): Promise<CheckResult[]>;
}

export const result = (ctx: Pick<CheckContext, 'target'>, id: string, status: CheckStatus, detail: string, fix = ''): CheckResult => ({
  id,
  chain: ctx.target.config.name,
  status,
  detail,
  fix: status === 'ok' ? '' : fix,
});

export type { Address, Hex };

/** A URL as the doctor prints it: scheme and host only, since a provider's API key often sits in the path or query. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(an invalid URL)';
  }
}
