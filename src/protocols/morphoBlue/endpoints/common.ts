import { amountOf, type TokenInfo } from '../../common/amounts.ts';
import { ProtocolError } from '../../common/errors.ts';

/** 400 insufficient_balance unless the wallet holds `needed`. */
export function requireBalance(held: bigint, needed: bigint, token: TokenInfo): void {
  if (held >= needed) return;
  const f = (x: bigint) => `${amountOf(x, token.decimals).formatted} ${token.symbol}`;
  throw new ProtocolError('insufficient_balance', `the wallet holds ${f(held)}, less than ${f(needed)}`, { field: 'amount' });
}

export const formatted = (x: bigint, token: TokenInfo) => `${amountOf(x, token.decimals).formatted} ${token.symbol}`;
