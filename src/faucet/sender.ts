import { randomUUID } from 'node:crypto';
import type { Address, Hex } from 'viem';
import type { ChainWorker, SendFailure, SendingAccounts, TransactionReceiptInfo } from '../chain/types.ts';
import type { ChainName } from '../config/chains.ts';
import { silentLogger, type Logger } from '../lib/logger.ts';
import type { FaucetChain } from './config.ts';
import { FaucetError } from './errors.ts';

/** What one drip did on chain. */
export interface DripReceipt {
  txHash: Hex;
  blockNumber: bigint;
  /** The recipient's token balance at the drip's block; null when the chain did not answer that read. */
  balanceRaw: bigint | null;
}

/**
 * What the faucet asks of a chain's worker (in process, or over gRPC beside a cluster): its faucet account sends
 * the transfer (the worker owns that account's nonces), and two named reads. No RPC URL, no key in the faucet.
 */
export type FaucetChainWorker = Pick<ChainWorker, 'tokenBalance' | 'getTransactionReceipt'> & SendingAccounts;

export interface TokenSender {
  /** The account the tokens come from (the first chain's, when chains have accounts of their own). */
  readonly address: Address;
  /** Every chain's faucet account known so far. */
  addresses(): Address[];
  /**
   * Transfers the chain's drip amount to `to` through the chain worker and waits for the receipt. Drips on one
   * chain run one at a time. Rejects with a FaucetError.
   */
  send(chain: ChainName, to: Address): Promise<DripReceipt>;
  /** Refuses new sends and waits for the ones under way. */
  close(): Promise<void>;
}

export interface TokenSenderOptions {
  chains: readonly FaucetChain[];
  /** The worker of each chain served. */
  workers: ReadonlyMap<ChainName, FaucetChainWorker>;
  /** How long a send waits for its receipt. */
  receiptTimeoutMs: number;
  receiptPollMs: number;
  /** Sends allowed to wait their turn on one chain, the one in progress included (default 16). */
  maxQueued?: number;
  logger?: Logger;
}

/** Runs tasks one after the other; counts the ones not finished. */
function serialQueue() {
  let tail: Promise<unknown> = Promise.resolve();
  let size = 0;
  return {
    get size() {
      return size;
    },
    run<T>(task: () => Promise<T>): Promise<T> {
      size++;
      const result = tail.then(task).finally(() => size--);
      tail = result.catch(() => undefined);
      return result;
    },
    idle: () => tail.then(() => undefined),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!;

/**
 * Sends aUSD through each chain's worker: an ERC-20 `transfer` from the faucet account the worker holds (a
 * faucetTransfer purpose, capped by the worker), not the devnet token's open `mint`. On a public testnet the faucet
 * cannot mint a token it does not control, and a balance is a budget: a leaked key loses what the account holds,
 * not an unlimited supply. The devnet runs the same code path as a testnet.
 *
 * Each chain's faucet account is asked of its worker at the start; a worker that does not answer then is asked
 * again at its chain's next drip (its drips answer chain_unavailable meanwhile). At least one must answer.
 */
export async function createTokenSender(opts: TokenSenderOptions): Promise<TokenSender> {
  const log = opts.logger ?? silentLogger;
  const maxQueued = opts.maxQueued ?? 16;
  let closed = false;

  interface Lane {
    config: FaucetChain;
    worker: FaucetChainWorker;
    queue: ReturnType<typeof serialQueue>;
    /** The worker's faucet account, once it answered. */
    account: Address | undefined;
  }
  const lanes = new Map<ChainName, Lane>();
  for (const c of opts.chains) {
    const worker = opts.workers.get(c.name);
    if (!worker) throw new Error(`the faucet has no chain worker for ${c.name}`);
    lanes.set(c.name, { config: c, worker, queue: serialQueue(), account: undefined });
  }

  const unavailable = (lane: Lane, e: unknown) => new FaucetError('chain_unavailable', `${lane.config.name} did not answer: ${messageOf(e)}`, { cause: e });

  /** The lane's faucet account, asked of its worker until it answers. */
  async function accountOf(lane: Lane): Promise<Address> {
    if (lane.account) return lane.account;
    let account: Address | undefined;
    try {
      account = await lane.worker.sendingAccount('faucetTransfer');
    } catch (e) {
      throw unavailable(lane, e);
    }
    if (!account) throw new FaucetError('chain_unavailable', `the ${lane.config.name} chain worker has no faucet account (its AGENT_WALLET_FAUCET_KEY)`);
    lane.account = account;
    return account;
  }

  const asked = await Promise.allSettled([...lanes.values()].map((l) => accountOf(l)));
  const first = asked.find((r): r is PromiseFulfilledResult<Address> => r.status === 'fulfilled');
  if (!first) {
    const reasons = asked.map((r) => (r.status === 'rejected' ? messageOf(r.reason) : '')).filter((m) => m !== '');
    throw new FaucetError('chain_unavailable', `no chain worker gave the faucet its account: ${reasons.join('; ')}`);
  }
  for (const [i, r] of asked.entries()) {
    if (r.status === 'rejected') log.warn({ chain: [...lanes.keys()][i], err: messageOf(r.reason) }, 'faucet: a chain worker did not answer; asked again at its next drip');
  }

  /** A refusal of the worker as the faucet's client sees it: nothing was sent. */
  function refused(lane: Lane, account: Address, f: SendFailure): FaucetError {
    const { name } = lane.config;
    switch (f.code) {
      case 'insufficient_funds':
        log.error({ chain: name, faucet: account }, 'faucet: out of native coin for gas');
        return new FaucetError('faucet_empty', `the faucet has no gas left on ${name}; the operators have been told`);
      case 'rpc_unavailable':
        return new FaucetError('chain_unavailable', `${name} did not answer: ${f.message}`);
      case 'simulation_reverted':
        return new FaucetError('transfer_failed', `the transfer reverted: ${f.message}`);
      default:
        // purpose_refused (above the worker's cap, a recipient it protects), no_account, send_failed, expired.
        log.error({ chain: name, code: f.code, err: f.message }, 'faucet: the chain worker refused a drip');
        return new FaucetError('transfer_failed', `the chain worker refused the transfer (${f.code}): ${f.message}`);
    }
  }

  /** Polls for the receipt until the deadline: the transaction is out, so a failed poll is "not yet". */
  async function receiptOf(lane: Lane, hash: Hex): Promise<TransactionReceiptInfo> {
    const deadline = performance.now() + opts.receiptTimeoutMs;
    for (;;) {
      try {
        const receipt = await lane.worker.getTransactionReceipt(hash);
        if (receipt) return receipt;
      } catch (e) {
        log.warn({ chain: lane.config.name, hash, err: messageOf(e) }, 'faucet: receipt poll failed');
      }
      if (performance.now() + opts.receiptPollMs > deadline) {
        throw new FaucetError(
          'receipt_timeout',
          `the transfer was sent but not mined within ${Math.round(opts.receiptTimeoutMs / 1000)} s; look it up by tx_hash before asking again`,
          { details: { tx_hash: hash } },
        );
      }
      await sleep(opts.receiptPollMs);
    }
  }

  async function transfer(lane: Lane, to: Address): Promise<DripReceipt> {
    const { name, token, amountRaw } = lane.config;
    const account = await accountOf(lane);
    let available: bigint;
    try {
      available = await lane.worker.tokenBalance(token.address, account);
    } catch (e) {
      throw unavailable(lane, e);
    }
    if (available < amountRaw) {
      log.error({ chain: name, faucet: account, balance: String(available) }, 'faucet: out of aUSD');
      throw new FaucetError('faucet_empty', `the faucet has run out of aUSD on ${name}; the operators have been told`);
    }
    // The drip's own id: a sign retried over gRPC after a lost answer gets this very transaction back.
    const signed = await lane.worker.signSend({ kind: 'faucetTransfer', id: randomUUID(), asset: token.address, to, amount: String(amountRaw) });
    if (!signed.ok) throw refused(lane, account, signed.error);
    const txHash = signed.value.hash;
    const sent = await lane.worker.send(txHash);
    if (!sent.ok) {
      // Refused by the node: its nonce is given back now, not at the end of its send window. A send whose answer
      // was lost may have gone out: left to its window (the worker fills the nonce or finds it sent).
      if (sent.error.code !== 'rpc_unavailable') await lane.worker.abandon(txHash).catch(() => undefined);
      throw refused(lane, account, sent.error);
    }
    const receipt = await receiptOf(lane, txHash);
    if (receipt.status !== 'success') {
      throw new FaucetError('transfer_failed', 'the transfer was mined and reverted', { details: { tx_hash: txHash } });
    }
    // Read at the drip's own block: the balance this drip made, whatever came after it.
    const balanceRaw = await lane.worker.tokenBalance(token.address, to, receipt.blockNumber).catch((e: unknown) => {
      log.warn({ chain: name, txHash, err: messageOf(e) }, 'faucet: could not read the balance after a drip');
      return null;
    });
    log.info({ chain: name, to, txHash, block: String(receipt.blockNumber) }, 'faucet: drip sent');
    return { txHash, blockNumber: receipt.blockNumber, balanceRaw };
  }

  return {
    address: first.value,
    addresses: () => [...new Set([...lanes.values()].flatMap((l) => (l.account ? [l.account] : [])))],
    async send(chain, to) {
      if (closed) throw new FaucetError('closed', 'the faucet is shutting down; retry shortly');
      const lane = lanes.get(chain);
      if (!lane) throw new Error(`the faucet sender does not serve ${chain}`); // the caller checks first
      if (lane.queue.size >= maxQueued) throw new FaucetError('busy', `too many drips are waiting on ${chain}; retry shortly`);
      return lane.queue.run(() => transfer(lane, to));
    },
    async close() {
      closed = true;
      await Promise.all([...lanes.values()].map((l) => l.queue.idle()));
    },
  };
}
