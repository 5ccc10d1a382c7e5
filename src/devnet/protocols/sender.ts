import { BaseError, type Address, type Chain, type Hex, type PublicClient, type TransactionReceipt } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { DevnetAccount } from '../accounts.ts';

/** One transaction of the deployment, with what it does (for errors). */
export interface PlannedTransaction {
  what: string;
  to: Address;
  data: Hex;
  /** Native coin sent along (e.g. a v4 pool's native ETH side); none when absent. */
  value?: bigint;
}

/** Enough for the largest transaction (a 24 KB contract's deployment, ≈ 5.5 M) and below Osaka's per-transaction cap (2^24). */
const GAS_LIMIT = 15_000_000n;
const RECEIPT_POLL_MS = 5;
const RECEIPT_TIMEOUT_MS = 10_000;

/**
 * Sends the deployer's transactions in order and returns their receipts; each must succeed (the first that
 * reverts is reported with its step and reason). All are signed here, every field filled (nonces counted from
 * the deployer's current one, a fixed gas limit, fees read once), so a transaction costs anvil one request and
 * no estimate. Each is handed over as soon as the previous one is accepted, without waiting for it to be
 * mined: automine mines them in nonce order meanwhile, and only the last receipt is waited for.
 *
 * Not all at once in one batched request, though that was faster still: anvil's pool, given them concurrently,
 * sometimes left transactions unmined for good (ready or queued behind a nonce it already had).
 */
export async function sendInOrder(
  client: PublicClient,
  chain: Chain,
  deployer: DevnetAccount,
  txs: readonly PlannedTransaction[],
  /** The protocol's key, for errors (e.g. `aaveV3`). */
  protocol: string,
): Promise<TransactionReceipt[]> {
  if (txs.length === 0) return [];
  const account = privateKeyToAccount(deployer.privateKey);
  const [nonce, gasPrice] = await Promise.all([client.getTransactionCount({ address: deployer.address, blockTag: 'pending' }), client.getGasPrice()]);
  // One transaction per block, well below half full: the base fee only falls meanwhile, twice today's is plenty.
  const sign = (tx: PlannedTransaction, i: number): Promise<Hex> =>
    account.signTransaction({
      chainId: chain.id,
      type: 'eip1559',
      to: tx.to,
      data: tx.data,
      ...(tx.value !== undefined && { value: tx.value }),
      nonce: nonce + i,
      gas: GAS_LIMIT,
      maxFeePerGas: gasPrice * 2n,
      maxPriorityFeePerGas: 0n,
    });
  const send = (serializedTransaction: Hex, i: number): Promise<Hex> =>
    client.request({ method: 'eth_sendRawTransaction', params: [serializedTransaction] }, { retryCount: 0 }).catch((error: unknown) => {
      throw new Error(`${chain.name}: ${protocol}: ${txs[i]!.what}: the transaction was not accepted: ${errorText(error)}`, { cause: error });
    });

  // Each transaction is signed while the previous one is on its way (hashing a 20 KB init code takes a while).
  const hashes: Hex[] = [];
  let inFlight: Promise<Hex> | undefined;
  for (const [i, tx] of txs.entries()) {
    const signed = await sign(tx, i);
    if (inFlight) hashes.push(await inFlight);
    inFlight = send(signed, i);
    inFlight.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
  }
  hashes.push(await inFlight!);
  await waitUntilMined(client, hashes.at(-1)!, `${chain.name}: ${protocol}`);
  const receipts = await Promise.all(hashes.map((hash) => client.getTransactionReceipt({ hash })));

  const failed = receipts.findIndex((r) => r.status !== 'success');
  if (failed >= 0) {
    const receipt = receipts[failed]!;
    throw new Error(`${chain.name}: ${protocol}: ${txs[failed]!.what}: transaction ${receipt.transactionHash} reverted: ${await revertReason(client, receipt.transactionHash)}`);
  }
  return receipts;
}

async function waitUntilMined(client: PublicClient, hash: Hex, what: string): Promise<void> {
  const deadline = Date.now() + RECEIPT_TIMEOUT_MS;
  for (;;) {
    const receipt = await client.getTransactionReceipt({ hash }).catch(() => undefined);
    if (receipt) return;
    if (Date.now() > deadline) {
      const pool = await client.request({ method: 'txpool_status' } as never).catch(() => 'unknown');
      throw new Error(`${what}: the deployment's last transaction ${hash} was not mined within ${RECEIPT_TIMEOUT_MS} ms (txpool: ${JSON.stringify(pool)})`);
    }
    await new Promise((resolve) => setTimeout(resolve, RECEIPT_POLL_MS));
  }
}

/** anvil's call trace of a mined transaction says why it reverted (a call replayed now would run on a later state). */
async function revertReason(client: PublicClient, hash: Hex): Promise<string> {
  try {
    const trace = (await client.request({ method: 'debug_traceTransaction', params: [hash, { tracer: 'callTracer' }] } as never)) as {
      error?: string;
      revertReason?: string;
      output?: Hex;
    };
    if (trace.revertReason !== undefined) return `Error(${JSON.stringify(trace.revertReason)})`;
    return `${trace.error ?? 'no error in its trace'}${trace.output && trace.output !== '0x' ? ` (output ${trace.output})` : ''}`;
  } catch (error) {
    return `reason unavailable (${errorText(error)})`;
  }
}

function errorText(error: unknown): string {
  if (error instanceof BaseError) return error.details ? `${error.shortMessage} (${error.details})` : error.shortMessage;
  return (error as Error).message;
}
