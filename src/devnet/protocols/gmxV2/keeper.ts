import { decodeEventLog, encodeAbiParameters, type Address, type Chain, type Hex, type Log } from 'viem';
import { devnetPublicClient, devnetWalletClient } from '../../clients.ts';
import type { DevnetAccount } from '../../accounts.ts';
import { dataStoreAbi, eventEmitterAbi, readerAbi } from '../../../protocols/gmxV2/abis.generated.ts';
import { devnetGmxAbis } from './deployments.ts';
import { dsKeys } from './keys.ts';
import type { GmxPricedToken, GmxTokenPrice } from './prices.ts';

/** Gas limit of an executeOrder: a fixed one, so a keeper never spends an estimate's round trip. */
const EXECUTE_GAS = 6_000_000n;
/** Attempts at an order whose executeOrder transaction itself reverts (not a cancellation) before it is left. */
const MAX_ATTEMPTS = 3;
const LIMIT_INCREASE = 3;
const LIMIT_DECREASE = 5;

/**
 * Whether an order may execute at this index price: market orders always; a limit increase once the price is at or
 * better than its trigger (long: ≤), a limit decrease once it is at or past it (long: ≥), as the OrderHandler checks.
 */
export function triggerReached(order: { orderType: number; triggerPrice: bigint; isLong: boolean }, indexPrice: bigint): boolean {
  if (order.orderType !== LIMIT_INCREASE && order.orderType !== LIMIT_DECREASE) return true;
  const below = (order.orderType === LIMIT_INCREASE) === order.isLong;
  return below ? indexPrice <= order.triggerPrice : indexPrice >= order.triggerPrice;
}

export interface GmxKeeper {
  stop(): Promise<void>;
}

/**
 * The devnet's GMX order keeper: every `pollMs` it reads the DataStore's ORDER_LIST and executes each order it
 * has seen for `delayMs` (wall clock) at the feeds' prices, from the keeper account, one at a time. It keeps no
 * state of its own (a restart reads the list again) and never executes twice: an executed or cancelled order
 * leaves the list, and an order gone by the time its turn comes (the account cancelled it) is skipped. Limit
 * orders wait for their trigger price; frozen ones (a limit order that failed) wait for their account's updateOrder.
 */
export function startGmxKeeper(p: {
  chain: Chain;
  dataStore: Address;
  orderHandler: Address;
  eventEmitter: Address;
  reader: Address;
  /** The market's index token, whose price limit orders' triggers are compared with. */
  indexToken: Address;
  keeper: DevnetAccount;
  tokens: readonly GmxPricedToken[];
  read: (tokens: readonly GmxPricedToken[]) => Promise<GmxTokenPrice[]>;
  delayMs: number;
  pollMs?: number;
  log: (line: string) => void;
}): GmxKeeper {
  const client = devnetPublicClient(p.chain);
  const wallet = devnetWalletClient(p.chain, p.keeper.privateKey);
  const pollMs = p.pollMs ?? 200;
  const firstSeen = new Map<Hex, number>();
  const attempts = new Map<Hex, number>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  let lastError = '';

  const pending = async (): Promise<readonly Hex[]> => {
    const count = await client.readContract({ address: p.dataStore, abi: dataStoreAbi, functionName: 'getBytes32Count', args: [dsKeys.orderList] });
    if (count === 0n) return [];
    return client.readContract({ address: p.dataStore, abi: dataStoreAbi, functionName: 'getBytes32ValuesAt', args: [dsKeys.orderList, 0n, count] });
  };

  /** Executes the order if it may execute now; false when it waits (a limit order's trigger, a frozen order). */
  const execute = async (key: Hex): Promise<boolean> => {
    const [prices, block, order] = await Promise.all([
      p.read(p.tokens),
      client.getBlock(),
      client.readContract({ address: p.reader, abi: readerAbi, functionName: 'getOrder', args: [p.dataStore, key] }),
    ]);
    const index = prices.find((t) => t.token.toLowerCase() === p.indexToken.toLowerCase());
    if (!index) throw new Error(`no price for the index token ${p.indexToken}`);
    if (order.flags.isFrozen) return false;
    if (!triggerReached({ orderType: order.numbers.orderType, triggerPrice: order.numbers.triggerPrice, isLong: order.flags.isLong }, index.price)) return false;
    const params = {
      tokens: prices.map((t) => t.token),
      providers: prices.map((t) => t.feed),
      data: prices.map((t) => encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }], [t.price, t.price, block.timestamp])),
    };
    const hash = await wallet.writeContract({
      address: p.orderHandler,
      abi: devnetGmxAbis.orderHandler,
      functionName: 'executeOrder',
      args: [key, params],
      gas: EXECUTE_GAS,
    });
    const receipt = await waitForReceipt(hash);
    if (receipt.status !== 'success') {
      const n = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, n);
      p.log(`gmxV2 keeper: executeOrder ${key} reverted (tx ${hash}, attempt ${n} of ${MAX_ATTEMPTS})`);
      return true;
    }
    p.log(`gmxV2 keeper: order ${key} ${outcomeOf(receipt.logs)} (tx ${hash}, gas ${receipt.gasUsed})`);
    return true;
  };

  const waitForReceipt = async (hash: Hex) => {
    for (;;) {
      const receipt = await client.getTransactionReceipt({ hash }).catch(() => undefined);
      if (receipt) return receipt;
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  const outcomeOf = (logs: readonly Log[]): string => {
    for (const log of logs) {
      if (log.address.toLowerCase() !== p.eventEmitter.toLowerCase()) continue;
      try {
        const event = decodeEventLog({ abi: eventEmitterAbi, data: log.data, topics: log.topics });
        const name = (event.args as { eventName: string }).eventName;
        if (name === 'OrderExecuted') return 'executed';
        if (name === 'OrderCancelled' || name === 'OrderFrozen') {
          const reason = (event.args as { eventData: { stringItems: { items: readonly { key: string; value: string }[] } } }).eventData.stringItems.items.find((i) => i.key === 'reason');
          return `${name === 'OrderFrozen' ? 'frozen' : 'cancelled'} (${reason?.value || 'no reason'})`;
        }
      } catch {
        // not one of the emitter's events
      }
    }
    return 'processed';
  };

  const pass = async (): Promise<void> => {
    const keys = await pending();
    const now = Date.now();
    for (const seen of [...firstSeen.keys()]) if (!keys.includes(seen)) firstSeen.delete(seen);
    for (const key of keys) {
      if (stopped) return;
      if (!firstSeen.has(key)) firstSeen.set(key, now);
      if (now - firstSeen.get(key)! < p.delayMs || (attempts.get(key) ?? 0) >= MAX_ATTEMPTS) continue;
      // Gone since the list was read (the account cancelled it): nothing to send.
      const listed = await client.readContract({ address: p.dataStore, abi: dataStoreAbi, functionName: 'containsBytes32', args: [dsKeys.orderList, key] });
      if (listed) await execute(key);
    }
  };

  const loop = (): void => {
    if (stopped) return;
    current = pass().then(
      () => {
        lastError = '';
      },
      (error: unknown) => {
        // Logged once per distinct error, not on every poll (a chain that is stopping fails every read).
        const message = (error as Error).message.split('\n')[0] ?? '';
        if (message !== lastError && !stopped) p.log(`gmxV2 keeper: ${message}`);
        lastError = message;
      },
    );
    void current.then(() => {
      if (!stopped) timer = setTimeout(loop, pollMs);
    });
  };
  p.log(`gmxV2 keeper: ${p.keeper.address} executes orders ${p.delayMs} ms after it sees them`);
  loop();

  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
