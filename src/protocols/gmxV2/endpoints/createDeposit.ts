import { formatUnits, isAddressEqual } from 'viem';
import { z } from 'zod';
import { amountOf, tokenUnits, type TokenInfo } from '../../common/amounts.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields, decimalAmount } from '../../common/inputs.ts';
import { balanceOfRead } from '../../common/tokens.ts';
import type { AgentContext } from '../../types.ts';
import type { GmxV2Config } from '../config.ts';
import { CHAINS, defineAction } from '../define.ts';
import { isWnt, nativeEth } from '../wnt.ts';
import { chargedExecutionFee } from '../executionFees.ts';
import { followDeposit } from '../follow.ts';
import { DEFAULT_ORDER_SLIPPAGE_BPS, ExecutionFeeInput, MarketRef, MinRawAmount, SlippageBps } from '../inputs.ts';
import { checkDepositExecutes, depositAmountOut, depositCalls, GM_DECIMALS, lessSlippage, marketTokenPrice, type DepositSpec, type Sent } from '../liquidity.ts';
import { findMarket } from '../markets.ts';
import { usd } from '../present.ts';
import { snapshot, type PerpMarket } from '../snapshot.ts';

export const createDeposit = defineAction({
  path: 'deposits',
  summary: 'Add liquidity: long and/or short token in, GM out',
  description:
    "Creates a GMX v2 deposit from the wallet: the market's long token (its WETH is paid in native ETH), its short token, or both, go " +
    "to GMX's DepositVault with the execution fee, and the keeper mints the market's GM liquidity tokens to the wallet at the pool's " +
    'value (less GMX\'s deposit fee and price impact). min_market_tokens is fixed now from the expected GM and slippage_bps (default ' +
    '50); GMX\'s own execution is simulated first. The request is `confirmed` once the deposit exists; what the keeper did is ' +
    'status.order (executed, or cancelled with the reason, the tokens refunded) and a perp.deposit_* webhook event.',
  input: z.object({
    ...actionFields(CHAINS),
    market: MarketRef,
    long_amount: decimalAmount(false).optional().meta({ description: "The market's long token to deposit, in token units (ETH for a WETH long token: native ETH)", examples: ['0.5'] }),
    short_amount: decimalAmount(false).optional().meta({ description: "The market's short token to deposit, in token units", examples: ['1500'] }),
    slippage_bps: SlippageBps.optional().meta({ description: `Tolerated shortfall of GM received below the expected, basis points (default ${DEFAULT_ORDER_SLIPPAGE_BPS})`, examples: [50] }),
    min_market_tokens: MinRawAmount.optional().meta({ description: 'The least GM (smallest unit) the keeper may mint, else it cancels the deposit (default: the expected less slippage_bps)' }),
    execution_fee: ExecutionFeeInput,
  }),
  follow: followDeposit,
  async plan(ctx, input) {
    const config = ctx.config as GmxV2Config;
    const snap = await snapshot(ctx);
    const m = findMarket(snap.perp, input.market);
    if (m.priced.isDisabled) throw new ProtocolError('unknown_market', `${m.name} is disabled`, { field: 'market' });
    if (input.long_amount === undefined && input.short_amount === undefined) {
      throw new ProtocolError('invalid_amount', `give long_amount (${m.long.symbol}), short_amount (${m.short.symbol}), or both`, { field: 'long_amount' });
    }
    if (isAddressEqual(m.long.address, m.short.address) && input.long_amount !== undefined && input.short_amount !== undefined) {
      throw new ProtocolError('invalid_amount', `${m.name} has one token for both sides: give long_amount only`, { field: 'short_amount' });
    }
    // The wrapped native token is paid in native ETH (sendWnt wraps it), as order collateral is.
    const paid = (t: TokenInfo): TokenInfo => (isWnt(config, t) ? nativeEth(config) : t);
    const longAmount = input.long_amount === undefined ? 0n : tokenUnits(input.long_amount, m.long, 'long_amount');
    const shortAmount = input.short_amount === undefined ? 0n : tokenUnits(input.short_amount, m.short, 'short_amount');
    const sent: Sent[] = [
      ...(longAmount > 0n ? [{ token: paid(m.long), amount: longAmount }] : []),
      ...(shortAmount > 0n ? [{ token: paid(m.short), amount: shortAmount }] : []),
    ];
    const fee = await chargedExecutionFee(ctx, 'deposit', input.execution_fee);
    // What the wallet holds first: an amount past it is refused before it is quoted (or encoded at all).
    await ensureFunds(ctx, { market: m, sent, minMarketTokens: 0n, executionFee: fee });
    const [expected, price] = await Promise.all([depositAmountOut(ctx, m, longAmount, shortAmount), marketTokenPrice(ctx, m, true)]);
    const min = input.min_market_tokens !== undefined ? BigInt(input.min_market_tokens) : lessSlippage(expected, input.slippage_bps ?? DEFAULT_ORDER_SLIPPAGE_BPS);
    const deposit: DepositSpec = { market: m, sent, minMarketTokens: min, executionFee: fee };
    await checkDepositExecutes(ctx, deposit);

    const valueUsd = usdOf(m, longAmount, shortAmount);
    return {
      calls: depositCalls(config, ctx.wallet, deposit),
      tokens: [...new Map([paid(m.long), paid(m.short), nativeEth(config)].map((t) => [`${t.native ? 'native' : t.address}`, t])).values()],
      bounds: { min_market_tokens: min.toString(), execution_fee: fee.toString() },
      settles: 'next_price',
      preview: {
        kind: 'deposit',
        market_token_price: usd(price),
        value_usd: usd(valueUsd),
        execution_fee: amountOf(fee, 18),
        receive: [{ token: `GM ${m.name}`, expected: formatUnits(expected, GM_DECIMALS), minimum: formatUnits(min, GM_DECIMALS) }],
      },
    };
  },
});

/** The deposit's USD value at the oracle's min prices (USD, 30 decimals). */
function usdOf(m: PerpMarket, longAmount: bigint, shortAmount: bigint): bigint {
  const { long, short } = m.priced.prices;
  const value = (amount: bigint, p: { min: bigint; decimals: number }) => (amount * p.min) / 10n ** BigInt(p.decimals);
  return value(longAmount, long) + value(shortAmount, short);
}

/** The wallet must hold the ETH the deposit sends (the fee, native ETH deposited) and each token deposited. */
async function ensureFunds(ctx: AgentContext<'gmxV2'>, d: DepositSpec): Promise<void> {
  const erc20 = d.sent.filter((s) => !s.token.native);
  const ethNeeded = d.executionFee + d.sent.filter((s) => s.token.native).reduce((n, s) => n + s.amount, 0n);
  const [eth, held] = await Promise.all([ctx.nativeBalance(), erc20.length ? ctx.read(erc20.map((s) => balanceOfRead(s.token.address, ctx.wallet))) : Promise.resolve([] as bigint[])]);
  if (eth < ethNeeded) {
    throw new ProtocolError('insufficient_balance', `the wallet holds ${formatUnits(eth, 18)} ETH, less than the ${formatUnits(ethNeeded, 18)} ETH this deposit sends (execution fee and any ETH deposited)`, {
      field: 'long_amount',
    });
  }
  erc20.forEach((s, i) => {
    const balance = (held as readonly bigint[])[i]!;
    if (balance < s.amount) {
      throw new ProtocolError('insufficient_balance', `the wallet holds ${formatUnits(balance, s.token.decimals)} ${s.token.symbol}, less than the ${formatUnits(s.amount, s.token.decimals)} to deposit`, {
        field: d.market.long.address.toLowerCase() === s.token.address.toLowerCase() ? 'long_amount' : 'short_amount',
      });
    }
  });
}
