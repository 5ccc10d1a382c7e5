import type { ProtocolFamily } from '../types.ts';
import { CompoundV3ConfigSchema } from './config.ts';
import { balances } from './endpoints/balances.ts';
import { borrow } from './endpoints/borrow.ts';
import { borrowCapacity } from './endpoints/borrowCapacity.ts';
import { markets } from './endpoints/markets.ts';
import { position } from './endpoints/position.ts';
import { repay } from './endpoints/repay.ts';
import { supply } from './endpoints/supply.ts';
import { withdraw } from './endpoints/withdraw.ts';
import { decodeCometRevert } from './errors.ts';
import { PositionSchema } from './position.ts';

/**
 * `lend-b-v3`: Compound v3 (Comet) on base (Base Sepolia). Written against the real Comet ABI (abi.ts), so the same
 * adapter serves the devnet's DevnetComet and the real Comet. docs/protocols/lend-b-v3.md.
 */
export const compoundV3Family: ProtocolFamily<'compoundV3'> = {
  slug: 'lend-b-v3',
  aliases: ['compound-v3'],
  protocol: 'Compound v3',
  key: 'compoundV3',
  config: CompoundV3ConfigSchema,
  chains: ['base'],
  description: 'Compound v3 (Comet) lending on base: supply the base token or collateral, borrow the base token against collateral, repay, withdraw.',
  position: PositionSchema,
  // The spec's order (4.3).
  endpoints: [markets, position, balances, borrowCapacity, supply, withdraw, repay, borrow],
  decodeRevert: decodeCometRevert,
};
