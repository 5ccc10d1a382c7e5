import { formatUnits } from 'viem';
import { amountOf, requestedAmount, type TokenInfo } from '../../common/amounts.ts';
import { ProtocolError } from '../../common/errors.ts';
import { actionFields, withAmount } from '../../common/inputs.ts';
import { balanceOfRead } from '../../common/tokens.ts';
import type { GmxV2Config } from '../config.ts';
import { CHAINS, defineAction } from '../define.ts';
import { isWnt, nativeEth } from '../wnt.ts';
import { chargedExecutionFee } from '../executionFees.ts';
import { followWithdrawal } from '../follow.ts';
import { DEFAULT_ORDER_SLIPPAGE_BPS, ExecutionFeeInput, MarketRef, MinRawAmount, SlippageBps } from '../inputs.ts';
import { checkWithdrawalExecutes, GM_DECIMALS, lessSlippage, marketTokenPrice, withdrawalAmountOut, withdrawalCalls, type WithdrawalSpec } from '../liquidity.ts';
import { findMarket } from '../markets.ts';
import { usd } from '../present.ts';
import { snapshot } from '../snapshot.ts';

export const createWithdrawal = defineAction({
  path: 'withdrawals',
  summary: 'Remove liquidity: GM in, long and short tokens out',
  description:
    "Creates a GMX v2 withdrawal from the wallet: GM tokens of a market (amount in GM, or \"max\") go to GMX's WithdrawalVault with the " +
    "execution fee, and the keeper burns them and pays the wallet the market's long and short tokens in the pool's proportion (WETH as " +
    'native ETH), less GMX\'s fee. The least of each token is fixed now from the expected amounts and slippage_bps (default 50); GMX\'s ' +
    'own execution is simulated first. The request is `confirmed` once the withdrawal exists; what the keeper did is status.order and ' +
    'a perp.withdrawal_* webhook event.',
  input: withAmount(
    {
      ...actionFields(CHAINS),
      market: MarketRef,
      slippage_bps: SlippageBps.optional().meta({ description: `Tolerated shortfall of each token below the expected, basis points (default ${DEFAULT_ORDER_SLIPPAGE_BPS})`, examples: [50] }),
      min_long_amount: MinRawAmount.optional().meta({ description: 'The least of the long token (smallest unit) the keeper may pay (default: the expected less slippage_bps)' }),
      min_short_amount: MinRawAmount.optional().meta({ description: 'The least of the short token (smallest unit) the keeper may pay (default: the expected less slippage_bps)' }),
      execution_fee: ExecutionFeeInput,
    },
    { max: true },
  ),
  follow: followWithdrawal,
  async plan(ctx, input) {
    const config = ctx.config as GmxV2Config;
    const snap = await snapshot(ctx);
    const m = findMarket(snap.perp, input.market);
    const gm: TokenInfo = { symbol: 'GM', address: m.address, decimals: GM_DECIMALS };
    const [[held], fee] = await Promise.all([ctx.read([balanceOfRead(m.address, ctx.wallet)]), chargedExecutionFee(ctx, 'withdrawal', input.execution_fee)]);
    const asked = requestedAmount(input, gm);
    const marketTokens = asked.kind === 'max' ? held : asked.raw;
    if (marketTokens === 0n) throw new ProtocolError('nothing_to_withdraw', `the wallet holds no GM of ${m.name}`, { field: 'amount' });
    if (marketTokens > held) {
      throw new ProtocolError('insufficient_balance', `the wallet holds ${formatUnits(held, GM_DECIMALS)} GM of ${m.name}, less than the ${formatUnits(marketTokens, GM_DECIMALS)} to withdraw`, { field: 'amount' });
    }
    const eth = await ctx.nativeBalance();
    if (eth < fee) throw new ProtocolError('insufficient_balance', `the wallet holds ${formatUnits(eth, 18)} ETH, less than the ${formatUnits(fee, 18)} ETH execution fee`, { field: 'execution_fee' });

    const [[expectedLong, expectedShort], price] = await Promise.all([withdrawalAmountOut(ctx, m, marketTokens), marketTokenPrice(ctx, m, false)]);
    const slippage = input.slippage_bps ?? DEFAULT_ORDER_SLIPPAGE_BPS;
    const minLong = input.min_long_amount !== undefined ? BigInt(input.min_long_amount) : lessSlippage(expectedLong, slippage);
    const minShort = input.min_short_amount !== undefined ? BigInt(input.min_short_amount) : lessSlippage(expectedShort, slippage);
    const withdrawal: WithdrawalSpec = { market: m, marketTokens, minLongTokenAmount: minLong, minShortTokenAmount: minShort, executionFee: fee };
    await checkWithdrawalExecutes(ctx, withdrawal);

    const shown = (t: TokenInfo) => (isWnt(config, t) ? 'ETH' : t.symbol);
    return {
      calls: withdrawalCalls(config, ctx.wallet, withdrawal),
      tokens: [gm, nativeEth(config), ...[m.long, m.short].filter((t, i, all) => !isWnt(config, t) && all.findIndex((x) => x.address === t.address) === i)],
      bounds: { min_long_amount: minLong.toString(), min_short_amount: minShort.toString(), execution_fee: fee.toString() },
      settles: 'next_price',
      preview: {
        kind: 'withdrawal',
        market_token_price: usd(price),
        value_usd: usd((marketTokens * price) / 10n ** BigInt(GM_DECIMALS)),
        execution_fee: amountOf(fee, 18),
        receive: [
          { token: shown(m.long), expected: formatUnits(expectedLong, m.long.decimals), minimum: formatUnits(minLong, m.long.decimals) },
          { token: shown(m.short), expected: formatUnits(expectedShort, m.short.decimals), minimum: formatUnits(minShort, m.short.decimals) },
        ],
      },
    };
  },
});
