import type { Address } from 'viem';
import { entryPoint07Abi } from '../chain/abi.ts';
import type { ChainClient } from '../chain/client.ts';
import type { ChainWorker, SendingAccounts } from '../chain/types.ts';
import type { ChainName } from '../config/chains.ts';
import type { Metrics } from './registry.ts';

/** What the balance reader needs of a chain worker: its read client, its executors and sending accounts. */
export interface BalanceSource extends Pick<ChainWorker, 'senders'>, Pick<SendingAccounts, 'sendingAccount'> {
  readonly client: Pick<ChainClient, 'getBalance' | 'readContract'>;
}

export interface BalanceWatchOptions {
  chain: ChainName;
  entryPoint: Address;
  paymaster: Address;
  /** How often the figures are read again (default 30 s: a scrape interval; two RPC round trips per read). */
  intervalMs?: number;
  /** A read that failed: the gauges keep their last figures, and `balances_updated_timestamp_seconds` ages. */
  onError?(error: unknown): void;
}

export interface BalanceWatch {
  /** Reads every figure now (also what the timer does). Rejects when the chain did not answer. */
  refresh(): Promise<void>;
  stop(): void;
}

/**
 * Sets `agentwallet_account_balance_wei` (each executor as executor-N, in configuration order; the x402 settler;
 * the faucet account) and `agentwallet_paymaster_deposit_wei` of one chain from its worker's client, now and every
 * `intervalMs`: the figures the PrometheusRule's "running dry" alerts compare with their thresholds
 * (docs/operations.md, "Refilling the service's accounts"). The reads go out together as one JSON-RPC batch.
 */
export function watchBalances(metrics: Metrics, source: BalanceSource, opts: BalanceWatchOptions): BalanceWatch {
  const { chain } = opts;
  let running: Promise<void> | undefined;

  async function read(): Promise<void> {
    const [senders, settler, faucet] = await Promise.all([
      source.senders(),
      source.sendingAccount('x402Settlement'),
      source.sendingAccount('faucetTransfer'),
    ]);
    // senders() is every account the worker sends from: the executors (in configuration order), then these two.
    const own = new Set([settler, faucet].filter((a) => a !== undefined).map((a) => a.toLowerCase()));
    const executors = senders.filter((a) => !own.has(a.toLowerCase()));
    const accounts: { account: string; address: Address }[] = [
      ...executors.map((address, i) => ({ account: `executor-${i}`, address })),
      ...(settler ? [{ account: 'x402-settler', address: settler }] : []),
      ...(faucet ? [{ account: 'faucet', address: faucet }] : []),
    ];
    const [balances, deposit] = await Promise.all([
      Promise.all(accounts.map((a) => source.client.getBalance({ address: a.address }))),
      source.client.readContract({ address: opts.entryPoint, abi: entryPoint07Abi, functionName: 'balanceOf', args: [opts.paymaster] }),
    ]);
    accounts.forEach((a, i) => metrics.accountBalance.set({ chain, account: a.account, address: a.address }, Number(balances[i]!)));
    metrics.paymasterDeposit.set({ chain, paymaster: opts.paymaster }, Number(deposit));
    metrics.balancesUpdated.set({ chain }, Date.now() / 1000);
  }

  // One read at a time: a slow RPC does not pile reads up behind the timer.
  const refresh = () => (running ??= read().finally(() => (running = undefined)));
  const tick = () => refresh().catch((e: unknown) => opts.onError?.(e));
  void tick();
  const timer = setInterval(tick, opts.intervalMs ?? 30_000);
  timer.unref();
  return { refresh, stop: () => clearInterval(timer) };
}
