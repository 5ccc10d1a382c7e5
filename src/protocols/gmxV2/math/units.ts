/**
 * GMX v2's fixed-point conventions, as its contracts and SDK use them: USD amounts and factors carry 30 decimals
 * (Precision.FLOAT_PRECISION), token amounts their own decimals. A token price here is USD per *whole* token at 30
 * decimals (the SDK's TokenPrices); the contracts and the oracle use USD per smallest unit (30 − decimals), which
 * `priceFromContract` / `priceToContract` convert.
 */

export const USD_DECIMALS = 30;
/** 1.0 as a GMX factor or USD amount. */
export const PRECISION = 10n ** 30n;
export const BASIS_POINTS = 10_000n;

/** The min/max price the oracle signs for a token, USD per whole token at 30 decimals, with the token's decimals. */
export interface TokenPrices {
  decimals: number;
  min: bigint;
  max: bigint;
}

export const pow10 = (decimals: number): bigint => 10n ** BigInt(decimals);

/** value × factor / 1e30, truncated toward zero (Precision.applyFactor). */
export const applyFactor = (value: bigint, factor: bigint): bigint => (value * factor) / PRECISION;

/**
 * x × y / z truncated toward zero; with `roundUpPositive`, a positive inexact quotient rounds up. A negative one
 * stays truncated: the SDK's bigMath.mulDiv checks for a positive remainder, and this follows it (GMX's
 * Precision.mulDiv would round a negative magnitude up, 1 smallest unit further from zero).
 */
export function mulDiv(x: bigint, y: bigint, z: bigint, roundUpPositive = false): bigint {
  const q = (x * y) / z;
  return roundUpPositive && (x * y) % z > 0n ? q + 1n : q;
}

/** a / b rounded away from zero (b > 0), as Calc.roundUpMagnitudeDivision. */
export const divRoundUpMagnitude = (a: bigint, b: bigint): bigint => (a < 0n ? (a - b + 1n) / b : (a + b - 1n) / b);

export const abs = (x: bigint): bigint => (x < 0n ? -x : x);

/** The USD value (30 decimals) of `amount` smallest units at `price` (USD per whole token, 30 decimals). */
export const usdOfTokens = (amount: bigint, decimals: number, price: bigint): bigint => (amount * price) / pow10(decimals);

/** The token amount (smallest units) worth `usd` at `price`, truncated; undefined for a non-positive price. */
export const tokensOfUsd = (usd: bigint, decimals: number, price: bigint): bigint | undefined => (price > 0n ? (usd * pow10(decimals)) / price : undefined);

export const midPrice = (p: Pick<TokenPrices, 'min' | 'max'>): bigint => (p.min + p.max) / 2n;

/** A contract / oracle price (USD per smallest unit, 30 − decimals) as USD per whole token. */
export const priceFromContract = (contractPrice: bigint, decimals: number): bigint => contractPrice * pow10(decimals);

/** USD per whole token as the contracts take it (an order's acceptablePrice, the Reader's price props), truncated. */
export const priceToContract = (price: bigint, decimals: number): bigint => price / pow10(decimals);

/** numerator / denominator in basis points, truncated (or rounded away from zero when asked). */
export function basisPointsOf(numerator: bigint, denominator: bigint, roundUp = false): bigint {
  const q = (numerator * BASIS_POINTS) / denominator;
  if (roundUp && (numerator * BASIS_POINTS) % denominator !== 0n) return q < 0n ? q - 1n : q + 1n;
  return q;
}

/** A token's contract / oracle min-max prices (per smallest unit) as TokenPrices (per whole token). */
export const tokenPricesFromContract = (p: { min: bigint; max: bigint }, decimals: number): TokenPrices => ({
  decimals,
  min: priceFromContract(p.min, decimals),
  max: priceFromContract(p.max, decimals),
});
