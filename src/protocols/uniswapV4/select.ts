import { z } from 'zod';
import { REQUIRED } from '../../api/http/index.ts';
import type { TokenInfo } from '../common/amounts.ts';
import { ProtocolError } from '../common/errors.ts';
import { poolsOfPair, resolvePoolToken, type V4Pool } from './pools.ts';

export const PoolInput = z
  .string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be a pool id or a pair') })
  .regex(/^(?:0x[0-9a-fA-F]{64}|[A-Za-z0-9._-]{1,42}\/[A-Za-z0-9._-]{1,42})$/, 'must be a 0x-prefixed 32-byte pool id or a pair like ETH/USDC')
  .meta({ description: 'Id or pair (ETH/USDC)' });

export const FeeInput = z
  .string({ error: 'must be a fee tier' })
  .regex(/^[0-9]{1,7}$/, 'must be a fee tier in hundredths of a bip, e.g. 3000 (0.3%)')
  .meta({ description: 'With a pair of several pools: the fee tier (3000 = 0.3%)' });

/** The listed pools `pool` names (an id: that one; a pair: the pair's, of `fee` if given). None: 400 unknown_pool. */
export function poolsNamed(pools: readonly V4Pool[], tokens: readonly TokenInfo[], pool: string, fee?: string): V4Pool[] {
  if (/^0x[0-9a-fA-F]{64}$/.test(pool)) {
    const found = pools.filter((p) => p.id.toLowerCase() === pool.toLowerCase());
    if (found.length === 0) throw new ProtocolError('unknown_pool', `no pool offered here has the id ${pool} (GET .../pools lists them)`, { field: 'pool' });
    return found;
  }
  const parts = pool.split('/');
  if (parts.length !== 2 || parts.some((t) => t === '')) throw new ProtocolError('unknown_pool', `${pool} is neither a 32-byte pool id nor a pair like ETH/USDC`, { field: 'pool' });
  const [a, b] = parts as [string, string];
  const ta = resolvePoolToken(a, tokens, 'pool');
  const tb = resolvePoolToken(b, tokens, 'pool');
  const found = poolsOfPair(pools, ta, tb).filter((p) => fee === undefined || p.key.fee === Number(fee));
  if (found.length === 0) throw new ProtocolError('unknown_pool', `no pool offered here joins ${ta.symbol} and ${tb.symbol}${fee === undefined ? '' : ` with fee ${fee}`}`, { field: fee === undefined ? 'pool' : 'fee' });
  return found;
}
