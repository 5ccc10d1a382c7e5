import { z } from 'zod';
import { Address } from '../common/configFields.ts';

/** The zero address: a v4 pool's currency for native ETH. */
export const NATIVE_CURRENCY = '0x0000000000000000000000000000000000000000';

/**
 * One v4 pool the deployment offers, by its PoolKey (the pool id is its keccak256): currency0 < currency1 as
 * addresses (native ETH is 0x0, so always currency0), the fee, the tick spacing and the hooks contract (0x0: none).
 */
export const UniswapV4PoolKeySchema = z
  .object({ currency0: Address, currency1: Address, fee: z.int().min(0).max(0xffffff), tickSpacing: z.int().min(1).max(32_767), hooks: Address })
  .refine((k) => BigInt(k.currency0) < BigInt(k.currency1), { message: 'currency0 must sort below currency1 (native ETH is 0x0)', path: ['currency0'] });
export type UniswapV4PoolKey = z.infer<typeof UniswapV4PoolKeySchema>;

/**
 * Uniswap v4 (a chain's `protocols.uniswapV4`): the singleton PoolManager, the UniversalRouter agents swap through
 * (with a Permit2 allowance: the wallets have no ERC-1271, so signed permits cannot work), the V4Quoter and
 * StateView it reads through, and the pools offered.
 */
export const UniswapV4ConfigSchema = z.object({
  poolManager: Address,
  universalRouter: Address,
  permit2: Address,
  v4Quoter: Address,
  stateView: Address,
  pools: z.array(UniswapV4PoolKeySchema),
});
export type UniswapV4Config = z.infer<typeof UniswapV4ConfigSchema>;
