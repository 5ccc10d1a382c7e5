import { formatTransactionReceipt, keccak256, type Address, type Hex, type TransactionReceipt } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { ChainClient } from '../client.ts';

/** One executor EOA: sends at most one bundle at a time; its transaction nonce is tracked here. */
export interface Executor {
  readonly account: PrivateKeyAccount;
  /** Next transaction nonce; undefined = read it from the chain before the next send. */
  nonce: number | undefined;
  busy: boolean;
}

export interface BundleTransaction {
  to: Address;
  data: Hex;
  gas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export type SendResult =
  | { kind: 'receipt'; receipt: TransactionReceipt }
  /** Sent, but no receipt within the timeout: the transaction may still land. */
  | { kind: 'timeout'; txHash: Hex }
  /** The node refused it (or failed before answering): nothing was sent as far as we know. */
  | { kind: 'failed'; error: unknown };

export interface SendOptions {
  syncSend: boolean;
  receiptPollMs: number;
  receiptTimeoutMs: number;
}

/** The pool of executor keys. */
export class ExecutorPool {
  readonly executors: readonly Executor[];
  readonly #client: ChainClient;
  readonly #chainId: number;

  constructor(client: ChainClient, chainId: number, keys: readonly Hex[]) {
    this.#client = client;
    this.#chainId = chainId;
    this.executors = keys.map((k) => ({ account: privateKeyToAccount(k), nonce: undefined, busy: false }));
  }

  /** An idle executor, marked busy; undefined when all are busy. */
  take(): Executor | undefined {
    const e = this.executors.find((x) => !x.busy);
    if (e) e.busy = true;
    return e;
  }

  give(e: Executor): void {
    e.busy = false;
  }

  /**
   * Forgets every executor's nonce: each reads it from the chain before its next send. After a reorg removed
   * bundle transactions the chain's nonces are behind ours, and a send at our nonce would wait in the node's
   * queue behind a gap that never fills.
   */
  resyncNonces(): void {
    for (const e of this.executors) e.nonce = undefined;
  }

  get idle(): number {
    return this.executors.filter((e) => !e.busy).length;
  }

  /**
   * Signs and sends one transaction from `e`. The local nonce advances only when the node accepted the
   * transaction; any failure makes the next send re-read it from the chain ('pending').
   */
  async send(e: Executor, tx: BundleTransaction, opts: SendOptions): Promise<SendResult> {
    let serialized: Hex;
    try {
      if (e.nonce === undefined) {
        e.nonce = await this.#client.getTransactionCount({ address: e.account.address, blockTag: 'pending' });
      }
      serialized = await e.account.signTransaction({
        type: 'eip1559',
        chainId: this.#chainId,
        nonce: e.nonce,
        to: tx.to,
        data: tx.data,
        gas: tx.gas,
        maxFeePerGas: tx.maxFeePerGas,
        maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
        value: 0n,
      });
    } catch (error) {
      e.nonce = undefined;
      return { kind: 'failed', error };
    }

    // Hashing a bundle transaction (tens of kB) is not free: only when the node does not hand the hash back.
    const txHash = () => keccak256(serialized);
    try {
      if (opts.syncSend) {
        // Raw request: viem's sendRawTransactionSync sends its `timeout` as a second parameter, which anvil
        // 1.7.1 refuses ("Invalid parameters"); the HTTP timeout bounds the wait instead.
        const raw = await this.#client.request(
          { method: 'eth_sendRawTransactionSync', params: [serialized] } as never,
          { retryCount: 0 },
        );
        e.nonce! += 1;
        return { kind: 'receipt', receipt: formatTransactionReceipt(raw as never) };
      }
      await this.#client.sendRawTransaction({ serializedTransaction: serialized });
      e.nonce! += 1;
    } catch (error) {
      // Refused, or accepted but the answer was lost (a timeout): only the node can tell which.
      if (!(await this.#knows(txHash()))) {
        e.nonce = undefined;
        return { kind: 'failed', error };
      }
      e.nonce! += 1;
    }
    const hash = txHash();
    const deadline = Date.now() + opts.receiptTimeoutMs;
    for (;;) {
      try {
        const receipt = await this.#client.getTransactionReceipt({ hash });
        return { kind: 'receipt', receipt };
      } catch {
        // not mined yet (TransactionReceiptNotFoundError) or a transient RPC error: keep polling
      }
      if (Date.now() >= deadline) {
        e.nonce = undefined;
        return { kind: 'timeout', txHash: hash };
      }
      await new Promise((r) => setTimeout(r, opts.receiptPollMs));
    }
  }

  async #knows(hash: Hex): Promise<boolean> {
    try {
      await this.#client.getTransaction({ hash });
      return true;
    } catch {
      return false;
    }
  }
}
