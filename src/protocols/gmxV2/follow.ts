import { formatUnits, isAddressEqual, type Address, type Hex } from 'viem';
import { readOf } from '../common/reads.ts';
import type { OrderFollow, OrderSettlement, ProtocolContext } from '../types.ts';
import { readerAbi } from './abis.generated.ts';
import type { GmxV2Config } from './config.ts';
import { decodeGmxRevert } from './errors.ts';
import { decodeGmxEvent, EVENT_LOG2, eventNameHash } from './events.ts';
import { priceSourceFor } from './prices.ts';

type Settled = OrderSettlement['state'];

/**
 * How one kind of GMX request is followed after its create is confirmed: found by its `…Created` event in the
 * create's own logs, then settled by GMX's keeper (`…Executed`, `…Cancelled` with the reason, an order's
 * `OrderFrozen`), all logged by the EventEmitter as EventLog2 with the request's key as topic1.
 */
function followRequest(kind: { created: string; settled: Readonly<Record<string, Settled>>; events: OrderFollow<'gmxV2'>['events']; fillPrice?: boolean }): OrderFollow<'gmxV2'> {
  const topics = Object.keys(kind.settled).map(eventNameHash);
  return {
    created(ctx, logs) {
      const config = ctx.config as GmxV2Config;
      for (const log of logs) {
        if (!isAddressEqual(log.address, config.eventEmitter)) continue;
        const e = decodeGmxEvent(log);
        if (e?.name === kind.created && e.topic1 !== undefined) return { key: e.topic1 };
      }
      return undefined;
    },

    async settled(ctx, key, fromBlock) {
      const config = ctx.config as GmxV2Config;
      const { logs, toBlock } = await ctx.events.getLogs({ address: config.eventEmitter, topics: [EVENT_LOG2, topics, key], fromBlock });
      const last = logs.at(-1);
      const event = last && decodeGmxEvent(last);
      const state = event && kind.settled[event.name];
      if (!last || !event || !state) return { searchedTo: toBlock };
      const settlement: OrderSettlement = { state, txHash: last.transactionHash, blockNumber: last.blockNumber };
      if (state === 'Executed') {
        const price = kind.fillPrice ? await fillPrice(ctx, last.transactionHash, key) : undefined;
        if (price !== undefined) settlement.fillPrice = price;
      } else {
        const reason = reasonOf(event.string['reason'], event.bytes['reasonBytes']);
        if (reason !== undefined) settlement.reason = reason;
      }
      return { settlement, searchedTo: toBlock };
    },

    events: kind.events,
  };
}

/** A perp-v2 order; its fill price is the `executionPrice` of the PositionIncrease or PositionDecrease its execution logged. */
export const followOrder = followRequest({
  created: 'OrderCreated',
  settled: { OrderExecuted: 'Executed', OrderCancelled: 'Cancelled', OrderFrozen: 'Frozen' },
  events: { Executed: 'perp.order_executed', Cancelled: 'perp.order_cancelled', Frozen: 'perp.order_frozen' },
  fillPrice: true,
});

/** A deposit of liquidity: the keeper mints the GM (DepositExecuted) or refunds the tokens (DepositCancelled). */
export const followDeposit = followRequest({
  created: 'DepositCreated',
  settled: { DepositExecuted: 'Executed', DepositCancelled: 'Cancelled' },
  events: { Executed: 'perp.deposit_executed', Cancelled: 'perp.deposit_cancelled' },
});

/** A withdrawal of liquidity: the keeper burns the GM and pays the tokens (WithdrawalExecuted), or returns the GM. */
export const followWithdrawal = followRequest({
  created: 'WithdrawalCreated',
  settled: { WithdrawalExecuted: 'Executed', WithdrawalCancelled: 'Cancelled' },
  events: { Executed: 'perp.withdrawal_executed', Cancelled: 'perp.withdrawal_cancelled' },
});

/** GMX's reason: the error's name decoded from its bytes when it is a custom error, else the reason string. */
function reasonOf(text: string | undefined, bytes: Hex | undefined): string | undefined {
  const decoded = bytes && bytes !== '0x' ? decodeGmxRevert(bytes) : undefined;
  return decoded?.name ?? (text || undefined);
}

/** USD per index token at which the order executed, from its position event in the keeper's transaction. */
async function fillPrice(ctx: ProtocolContext<'gmxV2'>, txHash: Hex, key: Hex): Promise<string | undefined> {
  const config = ctx.config as GmxV2Config;
  const receipt = await ctx.events.getTransactionReceipt(txHash);
  for (const log of receipt?.logs ?? []) {
    if (!isAddressEqual(log.address, config.eventEmitter)) continue;
    const e = decodeGmxEvent(log);
    if ((e?.name !== 'PositionIncrease' && e?.name !== 'PositionDecrease') || e.bytes32['orderKey']?.toLowerCase() !== key.toLowerCase()) continue;
    const price = e.uint['executionPrice'];
    const market = e.address['market'] as Address | undefined;
    if (price === undefined || market === undefined) return undefined;
    const [m] = await ctx.read([readOf({ address: config.reader, abi: readerAbi, functionName: 'getMarket', args: [config.dataStore, market] })]);
    const token = (await priceSourceFor(config.oracleUrl).tokens()).get(m.indexToken);
    return token ? formatUnits(price, 30 - token.decimals) : undefined;
  }
  return undefined;
}
