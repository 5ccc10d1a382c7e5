import { decodeEventLog, encodeAbiParameters, type Address, type Chain, type Hex, type Log } from 'viem';
import { devnetPublicClient, devnetWalletClient } from '../../clients.ts';
import type { DevnetAccount } from '../../accounts.ts';
import { dataStoreAbi, eventEmitterAbi, readerAbi } from '../../../protocols/gmxV2/abis.generated.ts';
import { devnetGmxAbis } from './deployments.ts';
import { dsKeys } from './keys.ts';
import type { GmxPricedToken, GmxTokenPrice } from './prices.ts';

/** Gas limit of an execution: a fixed one, so a keeper never spends an estimate's round trip. */
const EXECUTE_GAS = 6_000_000n;
/** Attempts at a request whose execute… transaction itself reverts (not a cancellation) before it is left. */
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

/** The requests a keeper executes: GMX's lists, the handler that executes them, and its events' names. */
type RequestKind = 'order' | 'deposit' | 'withdrawal';
const EVENT_PREFIX: Record<RequestKind, string> = { order: 'Order', deposit: 'Deposit', withdrawal: 'Withdrawal' };

/**
 * The devnet's GMX keeper: every `pollMs` it reads the DataStore's ORDER_LIST, DEPOSIT_LIST and WITHDRAWAL_LIST
 * and executes each request it has seen for `delayMs` (wall clock) at the feeds' prices, from the keeper account,
 * one at a time. It keeps no state of its own (a restart reads the lists again) and never executes twice: an
 * executed or cancelled request leaves its list, and one gone by the time its turn comes (the account cancelled
 * it) is skipped. Limit orders wait for their trigger price; frozen ones (a limit order that failed) wait for
 * their account's updateOrder.
 */
export function startGmxKeeper(p: {
  chain: Chain;
  dataStore: Address;
  orderHandler: Address;
  depositHandler: Address;
  withdrawalHandler: Address;
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

  const lists: Record<RequestKind, Hex> = { order: dsKeys.orderList, deposit: dsKeys.depositList, withdrawal: dsKeys.withdrawalList };
  const handlers = {
    order: { address: p.orderHandler, abi: devnetGmxAbis.orderHandler, functionName: 'executeOrder' },
    deposit: { address: p.depositHandler, abi: devnetGmxAbis.depositHandler, functionName: 'executeDeposit' },
    withdrawal: { address: p.withdrawalHandler, abi: devnetGmxAbis.withdrawalHandler, functionName: 'executeWithdrawal' },
  } as const;

  const pending = async (kind: RequestKind): Promise<readonly Hex[]> => {
    const count = await client.readContract({ address: p.dataStore, abi: dataStoreAbi, functionName: 'getBytes32Count', args: [lists[kind]] });
    if (count === 0n) return [];
    return client.readContract({ address: p.dataStore, abi: dataStoreAbi, functionName: 'getBytes32ValuesAt', args: [lists[kind], 0n, count] });
  };

  /** Whether the order may execute now: false while it waits (a limit order's trigger, a frozen order). */
  const orderReady = async (key: Hex, prices: readonly GmxTokenPrice[]): Promise<boolean> => {
    const order = await client.readContract({ address: p.reader, abi: readerAbi, functionName: 'getOrder', args: [p.dataStore, key] });
    const index = prices.find((t) => t.token.toLowerCase() === p.indexToken.toLowerCase());
    if (!index) throw new Error(`no price for the index token ${p.indexToken}`);
    if (order.flags.isFrozen) return false;
    return triggerReached({ orderType: order.numbers.orderType, triggerPrice: order.numbers.triggerPrice, isLong: order.flags.isLong }, index.price);
  };

  /** Executes the request if it may execute now (deposits and withdrawals always may). */
  const execute = async (kind: RequestKind, key: Hex): Promise<void> => {
    const [prices, block] = await Promise.all([p.read(p.tokens), client.getBlock()]);
    if (kind === 'order' && !(await orderReady(key, prices))) return;
    const params = {
      tokens: prices.map((t) => t.token),
      providers: prices.map((t) => t.feed),
      data: prices.map((t) => encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }], [t.price, t.price, block.timestamp])),
    };
    const handler = handlers[kind];
    const hash = await wallet.writeContract({ ...handler, args: [key, params], gas: EXECUTE_GAS });
    const receipt = await waitForReceipt(hash);
    if (receipt.status !== 'success') {
      const n = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, n);
      p.log(`gmxV2 keeper: ${handler.functionName} ${key} reverted (tx ${hash}, attempt ${n} of ${MAX_ATTEMPTS})`);
      return;
    }
    p.log(`gmxV2 keeper: ${kind} ${key} ${outcomeOf(kind, receipt.logs)} (tx ${hash}, gas ${receipt.gasUsed})`);
  };

  const waitForReceipt = async (hash: Hex) => {
    for (;;) {
      const receipt = await client.getTransactionReceipt({ hash }).catch(() => undefined);
      if (receipt) return receipt;
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  const outcomeOf = (kind: RequestKind, logs: readonly Log[]): string => {
    const prefix = EVENT_PREFIX[kind];
    for (const log of logs) {
      if (log.address.toLowerCase() !== p.eventEmitter.toLowerCase()) continue;
      try {
        const event = decodeEventLog({ abi: eventEmitterAbi, data: log.data, topics: log.topics });
        const name = (event.args as { eventName: string }).eventName;
        if (name === `${prefix}Executed`) return 'executed';
        if (name === `${prefix}Cancelled` || name === 'OrderFrozen') {
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
    const kinds: RequestKind[] = ['order', 'deposit', 'withdrawal'];
    const listed = await Promise.all(kinds.map((kind) => pending(kind)));
    const now = Date.now();
    // Keys are unique across the lists (one nonce for orders, deposits and withdrawals).
    const all = new Set(listed.flat());
    for (const seen of [...firstSeen.keys()]) if (!all.has(seen)) firstSeen.delete(seen);
    for (const [i, kind] of kinds.entries()) {
      for (const key of listed[i]!) {
        if (stopped) return;
        if (!firstSeen.has(key)) firstSeen.set(key, now);
        if (now - firstSeen.get(key)! < p.delayMs || (attempts.get(key) ?? 0) >= MAX_ATTEMPTS) continue;
        // Gone since the list was read (the account cancelled it): nothing to send.
        const still = await client.readContract({ address: p.dataStore, abi: dataStoreAbi, functionName: 'containsBytes32', args: [lists[kind], key] });
        if (still) await execute(kind, key);
      }
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
  p.log(`gmxV2 keeper: ${p.keeper.address} executes orders, deposits and withdrawals ${p.delayMs} ms after it sees them`);
  loop();

  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
