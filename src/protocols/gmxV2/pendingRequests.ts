import { formatUnits, type Hex } from 'viem';
import { z } from 'zod';
import { AmountSchema, amountOf } from '../common/amounts.ts';
import { readOf } from '../common/reads.ts';
import type { ProtocolContext } from '../types.ts';
import { dataStoreAbi, readerAbi } from './abis.generated.ts';
import type { GmxV2Config } from './config.ts';
import { accountDepositListKey, accountWithdrawalListKey, REQUEST_EXPIRATION_TIME } from './keys.ts';
import { GM_DECIMALS } from './liquidity.ts';
import { uintRead } from './marketParams.ts';
import type { MarketsNow } from './markets.ts';

/** How many of an account's deposits (and of its withdrawals) one read lists. */
const REQUESTS_PAGE = 100n;

const TokenAmount = z.object({ token: z.string(), amount: z.string().meta({ description: 'Decimal, in the token' }) });

export const PendingRequestSchema = z
  .object({
    key: z.string().meta({ description: "GMX's key: what requests/cancel takes, and status.order.key of the request that created it" }),
    kind: z.enum(['deposit', 'withdrawal']),
    market: z.string(),
    market_name: z.string().nullable(),
    send: z.array(TokenAmount).meta({ description: 'What the request holds in its vault: a deposit’s tokens, a withdrawal’s GM' }),
    minimum: z.array(TokenAmount).meta({ description: 'The least it accepts: GM for a deposit, each token for a withdrawal' }),
    execution_fee: AmountSchema,
    updated_at: z.string(),
    cancellable_at: z.string().meta({ description: 'From when its account may cancel it (GMX’s request expiration after updated_at)' }),
  })
  .meta({ id: 'PerpRequest' });
type PendingRequest = z.infer<typeof PendingRequestSchema>;

type Deposit = Awaited<ReturnType<typeof readDeposits>>[number];
type Withdrawal = Awaited<ReturnType<typeof readWithdrawals>>[number];

export interface PendingRequests {
  deposits: { key: Hex; deposit: Deposit }[];
  withdrawals: { key: Hex; withdrawal: Withdrawal }[];
  expiration: bigint;
}

const readDeposits = (ctx: ProtocolContext<'gmxV2'>, config: GmxV2Config, keys: readonly Hex[]) =>
  ctx.read(keys.map((key) => readOf({ address: config.reader, abi: readerAbi, functionName: 'getDeposit', args: [config.dataStore, key] })));
const readWithdrawals = (ctx: ProtocolContext<'gmxV2'>, config: GmxV2Config, keys: readonly Hex[]) =>
  ctx.read(keys.map((key) => readOf({ address: config.reader, abi: readerAbi, functionName: 'getWithdrawal', args: [config.dataStore, key] })));

/** The wallet's pending deposits and withdrawals: their keys from the DataStore's account lists, then each from the Reader. */
export async function pendingRequests(ctx: ProtocolContext<'gmxV2'> & { wallet: `0x${string}` }): Promise<PendingRequests> {
  const config = ctx.config as GmxV2Config;
  const list = (key: Hex) => readOf({ address: config.dataStore, abi: dataStoreAbi, functionName: 'getBytes32ValuesAt', args: [key, 0n, REQUESTS_PAGE] });
  const [depositKeys, withdrawalKeys, expiration] = await ctx.read([
    list(accountDepositListKey(ctx.wallet)),
    list(accountWithdrawalListKey(ctx.wallet)),
    uintRead(config.dataStore, REQUEST_EXPIRATION_TIME, 'REQUEST_EXPIRATION_TIME'),
  ] as const);
  const [deposits, withdrawals] = await Promise.all([
    depositKeys.length ? readDeposits(ctx, config, depositKeys) : Promise.resolve([]),
    withdrawalKeys.length ? readWithdrawals(ctx, config, withdrawalKeys) : Promise.resolve([]),
  ]);
  return {
    deposits: deposits.map((deposit, i) => ({ key: depositKeys[i]!, deposit })),
    withdrawals: withdrawals.map((withdrawal, i) => ({ key: withdrawalKeys[i]!, withdrawal })),
    expiration,
  };
}

const iso = (seconds: bigint) => new Date(Number(seconds) * 1000).toISOString();

/** The requests as GET orders shows them, tokens named as the oracle names them. */
export function presentRequests(r: PendingRequests, now: MarketsNow): PendingRequest[] {
  const market = (address: string) => now.markets.find((m) => m.address.toLowerCase() === address.toLowerCase());
  const token = (address: `0x${string}`, amount: bigint) => {
    const t = now.tokens.get(address);
    return { token: t?.symbol ?? address, amount: t ? formatUnits(amount, t.decimals) : amount.toString() };
  };
  const common = (key: Hex, marketAddress: string, n: { executionFee: bigint; updatedAtTime: bigint }) => ({
    key,
    market: marketAddress,
    market_name: market(marketAddress)?.name ?? null,
    execution_fee: amountOf(n.executionFee, 18),
    updated_at: iso(n.updatedAtTime),
    cancellable_at: iso(n.updatedAtTime + r.expiration),
  });
  return [
    ...r.deposits.map(({ key, deposit: d }) => ({
      ...common(key, d.addresses.market, d.numbers),
      kind: 'deposit' as const,
      send: [token(d.addresses.initialLongToken, d.numbers.initialLongTokenAmount), token(d.addresses.initialShortToken, d.numbers.initialShortTokenAmount)].filter((x) => x.amount !== '0'),
      minimum: [{ token: 'GM', amount: formatUnits(d.numbers.minMarketTokens, GM_DECIMALS) }],
    })),
    ...r.withdrawals.map(({ key, withdrawal: w }) => {
      const m = market(w.addresses.market);
      return {
        ...common(key, w.addresses.market, w.numbers),
        kind: 'withdrawal' as const,
        send: [{ token: 'GM', amount: formatUnits(w.numbers.marketTokenAmount, GM_DECIMALS) }],
        minimum: m ? [token(m.long.address, w.numbers.minLongTokenAmount), token(m.short.address, w.numbers.minShortTokenAmount)] : [],
      };
    }),
  ];
}
