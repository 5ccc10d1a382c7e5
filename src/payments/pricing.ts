import type { Address } from 'viem';
import type { PaymentMode } from '../api/v1alpha1/index.ts';
import type { TokenConfig, TokenSymbol } from '../config/chainConfig.ts';

/**
 * The one place prices are made (spec §2.6): what a request costs in gas, what the caller pays under its key's
 * payment mode, and those USD amounts as raw token amounts. Money is counted in integers: micro-dollars for
 * USD, the token's smallest unit for tokens, and every conversion rounds up, never down (a quote that rounded
 * down would let a payment short by one unit pass).
 */

/** USD as an integer number of micro-dollars (1e-6 USD). */
export type MicroUsd = bigint;

const MICRO = 1_000_000n;
const WEI_PER_ETHER = 10n ** 18n;

/** ceil(a / b) for non-negative integers. */
const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

/** A decimal number of USD (configuration, e.g. 3000 or 0.01) as micro-dollars, rounded up. */
export function usdToMicro(usd: number): MicroUsd {
  if (!Number.isFinite(usd) || usd < 0) throw new RangeError(`a USD amount must be a non-negative number, got ${usd}`);
  // Through the decimal text, not floating-point multiplication: 0.1 * 1e6 is 100000.00000000001.
  const [whole, frac = ''] = usd.toFixed(12).split('.');
  const micro = BigInt(whole!) * MICRO + BigInt(frac.slice(0, 6).padEnd(6, '0'));
  return /[1-9]/.test(frac.slice(6)) ? micro + 1n : micro;
}

/** Micro-dollars as the JSON number the API shows (exact to the micro-dollar). */
export const microToUsd = (micro: MicroUsd): number => Number(micro) / 1e6;

/** Gas cost in micro-dollars: gas × fee per gas (wei) × the native coin's USD price, rounded up. */
export function gasCostMicroUsd(gas: bigint, maxFeePerGas: bigint, nativeUsdPrice: number): MicroUsd {
  return ceilDiv(gas * maxFeePerGas * usdToMicro(nativeUsdPrice), WEI_PER_ETHER);
}

/** A USD amount in a token's raw units (a stablecoin: 1 token = 1 USD), rounded up. */
export function rawTokenAmount(micro: MicroUsd, decimals: number): bigint {
  return ceilDiv(micro * 10n ** BigInt(decimals), MICRO);
}

/**
 * Gas the auto mode's transfer adds to an operation, priced into its quote before the transfer exists (an
 * ERC-20 transfer from the wallet inside executeBatch: ≈ 35k to a warm recipient, more for a first one; the
 * quote is what the caller pays, so it errs on the high side).
 */
export const AUTO_TRANSFER_GAS = 60_000n;

/**
 * The gas a request is priced on under `mode`, and the `estimated_gas` it shows (spec §2.2, §2.6): its calls'
 * simulated gas, and in the auto mode its own fee transfer's too, which runs in the same operation. So the price
 * always reads off the figure shown: estimated_gas × fee per gas × the native coin's price, plus the platform fee
 * in the manual mode only (docs/payments.md).
 */
export function pricedGas(mode: PaymentMode, simulatedGas: bigint): bigint {
  return mode === 'auto' ? simulatedGas + AUTO_TRANSFER_GAS : simulatedGas;
}

export interface PricingInputs {
  mode: PaymentMode;
  /** Gas the whole operation may use: pricedGas() of the simulation's. */
  gas: bigint;
  /** The fee per gas the operation will be signed with. */
  maxFeePerGas: bigint;
  nativeUsdPrice: number;
  /** The platform fee of this deployment, or the API client's own. */
  platformFeeUsd: number;
}

export interface Price {
  gasCostMicroUsd: MicroUsd;
  feeMicroUsd: MicroUsd;
  /** What the caller pays (spec §2.6): manual gas + fee, auto gas, sponsored nothing. */
  payableMicroUsd: MicroUsd;
}

/** What a request costs and what its caller pays, by payment mode (spec §2.6). */
export function price(p: PricingInputs): Price {
  const gasCost = gasCostMicroUsd(p.gas, p.maxFeePerGas, p.nativeUsdPrice);
  const fee = p.mode === 'manual' ? usdToMicro(p.platformFeeUsd) : 0n;
  const payable = p.mode === 'sponsored' ? 0n : gasCost + fee;
  return { gasCostMicroUsd: gasCost, feeMicroUsd: fee, payableMicroUsd: payable };
}

export interface QuotedToken {
  symbol: TokenSymbol;
  address: Address;
  decimals: number;
  amountRaw: bigint;
}

/**
 * The tokens a chain accepts for payment, each with the raw amount of `micro`, in the order the auto mode
 * tries them: symbols in byte order (spec §2.6 "sorted symbol order"; byte order puts upper case first: USDC,
 * USDT, aUSD).
 */
export function quoteTokens(tokens: readonly TokenConfig[], micro: MicroUsd): QuotedToken[] {
  return tokens
    .filter((t) => t.acceptedForPayment)
    .sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0))
    .map((t) => ({ symbol: t.symbol, address: t.address, decimals: t.decimals, amountRaw: rawTokenAmount(micro, t.decimals) }));
}
