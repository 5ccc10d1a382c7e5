import {
  BaseError,
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  InsufficientFundsError,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { decodeRevert, describeError, extractRevertData, isExecutionRevert } from '../chain/revert.ts';
import type { ChainName } from '../config/chains.ts';
import { testStablecoinAbi } from '../devnet/contracts.ts';
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

export interface TokenSender {
  /** The account the tokens come from. */
  readonly address: Address;
  /**
   * Transfers the chain's drip amount to `to` and waits for the receipt. Sends on one chain run one at a time,
   * so each takes the nonce after the previous one. Rejects with a FaucetError.
   */
  send(chain: ChainName, to: Address): Promise<DripReceipt>;
  /** Refuses new sends and waits for the ones under way. */
  close(): Promise<void>;
}

export interface TokenSenderOptions {
  chains: readonly FaucetChain[];
  privateKey: Hex;
  /** How long a send waits for its receipt. */
  receiptTimeoutMs: number;
  receiptPollMs: number;
  /** Per JSON-RPC call (default 10 s). */
  rpcTimeoutMs?: number;
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

/**
 * Sends aUSD from a funded account: an ERC-20 `transfer`, not the devnet token's open `mint`. On a public
 * testnet the faucet cannot mint a token it does not control, and a balance is a budget: a leaked key loses
 * what the account holds, not an unlimited supply. The devnet runs the same code path as a testnet.
 */
export function createTokenSender(opts: TokenSenderOptions): TokenSender {
  const account = privateKeyToAccount(opts.privateKey);
  const log = opts.logger ?? silentLogger;
  const maxQueued = opts.maxQueued ?? 16;
  let closed = false;

  const lanes = new Map(
    opts.chains.map((c) => {
      const chain = defineChain({
        id: c.chainId,
        name: c.name,
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [c.rpcUrl] } },
      });
      const transport = http(c.rpcUrl, { timeout: opts.rpcTimeoutMs ?? 10_000, retryCount: 1 });
      const client = createPublicClient({ chain, transport });
      const wallet = createWalletClient({ chain, transport, account });
      return [c.name, { config: c, client, wallet, queue: serialQueue() }] as const;
    }),
  );
  type Lane = NonNullable<ReturnType<typeof lanes.get>>;

  const balanceOf = (lane: Lane, owner: Address, blockNumber?: bigint) =>
    lane.client.readContract({ address: lane.config.token.address, abi: testStablecoinAbi, functionName: 'balanceOf', args: [owner], blockNumber });

  const unavailable = (lane: Lane, e: unknown) =>
    new FaucetError('chain_unavailable', `${lane.config.name} did not answer: ${describeError(e)}`, { cause: e });

  /** Polls for the receipt until the deadline: the transaction is out, so a failed poll is "not yet". */
  async function receiptOf(lane: Lane, hash: Hex): Promise<TransactionReceipt> {
    const deadline = performance.now() + opts.receiptTimeoutMs;
    for (;;) {
      try {
        return await lane.client.getTransactionReceipt({ hash });
      } catch (e) {
        if (!(e instanceof TransactionReceiptNotFoundError)) log.warn({ chain: lane.config.name, hash, err: describeError(e) }, 'faucet: receipt poll failed');
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
    let available: bigint;
    try {
      available = await balanceOf(lane, account.address);
    } catch (e) {
      throw unavailable(lane, e);
    }
    if (available < amountRaw) {
      log.error({ chain: name, faucet: account.address, balance: String(available) }, 'faucet: out of aUSD');
      throw new FaucetError('faucet_empty', `the faucet has run out of aUSD on ${name}; the operators have been told`);
    }
    let txHash: Hex;
    try {
      // viem takes the `pending` nonce: a send whose receipt timed out still holds its nonce until it is mined.
      txHash = await lane.wallet.writeContract({ address: token.address, abi: testStablecoinAbi, functionName: 'transfer', args: [to, amountRaw] });
    } catch (e) {
      if (e instanceof BaseError && e.walk((c) => c instanceof InsufficientFundsError)) {
        log.error({ chain: name, faucet: account.address }, 'faucet: out of native coin for gas');
        throw new FaucetError('faucet_empty', `the faucet has no gas left on ${name}; the operators have been told`, { cause: e });
      }
      if (isExecutionRevert(e)) {
        const data = extractRevertData(e);
        throw new FaucetError('transfer_failed', `the transfer reverted: ${data ? decodeRevert(data).reason : describeError(e)}`, { cause: e });
      }
      throw unavailable(lane, e);
    }
    const receipt = await receiptOf(lane, txHash);
    if (receipt.status !== 'success') {
      throw new FaucetError('transfer_failed', 'the transfer was mined and reverted', { details: { tx_hash: txHash } });
    }
    // Read at the drip's own block: the balance this drip made, whatever came after it.
    const balanceRaw = await balanceOf(lane, to, receipt.blockNumber).catch((e: unknown) => {
      log.warn({ chain: name, txHash, err: describeError(e) }, 'faucet: could not read the balance after a drip');
      return null;
    });
    log.info({ chain: name, to, txHash, block: String(receipt.blockNumber) }, 'faucet: drip sent');
    return { txHash, blockNumber: receipt.blockNumber, balanceRaw };
  }

  return {
    address: account.address,
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
