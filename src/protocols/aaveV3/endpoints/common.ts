import { amountOf, type TokenInfo } from '../../common/amounts.ts';
import { ProtocolError } from '../../common/errors.ts';

export const formatted = (x: bigint, token: TokenInfo) => `${amountOf(x, token.decimals).formatted} ${token.symbol}`;

/** 400 insufficient_balance unless the wallet holds `needed`. */
export function requireBalance(held: bigint, needed: bigint, token: TokenInfo): void {
  if (held < needed) throw new ProtocolError('insufficient_balance', `the wallet holds ${formatted(held, token)}, less than ${formatted(needed, token)}`, { field: 'amount' });
}
