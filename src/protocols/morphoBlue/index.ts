import type { ProtocolFamily } from '../types.ts';
import { MorphoBlueConfigSchema } from './config.ts';
import { borrow } from './endpoints/borrow.ts';
import { market } from './endpoints/market.ts';
import { markets } from './endpoints/markets.ts';
import { position } from './endpoints/position.ts';
import { repay } from './endpoints/repay.ts';
import { supply } from './endpoints/supply.ts';
import { supplyCollateral } from './endpoints/supplyCollateral.ts';
import { withdraw } from './endpoints/withdraw.ts';
import { withdrawCollateral } from './endpoints/withdrawCollateral.ts';
import { decodeMorphoRevert } from './errors.ts';
import { PositionSchema } from './position.ts';

/** `lend-c`: Morpho Blue on base (Base Sepolia), the markets the deployment lists. docs/protocols/lend-c.md. */
export const morphoBlueFamily: ProtocolFamily<'morphoBlue'> = {
  slug: 'lend-c',
  aliases: ['morpho-blue'],
  protocol: 'Morpho Blue',
  key: 'morphoBlue',
  config: MorphoBlueConfigSchema,
  chains: ['base'],
  description: 'Morpho Blue isolated lending markets on base: supply the loan token, supply collateral, borrow against it, repay, withdraw.',
  position: PositionSchema,
  // The spec's order (4.3).
  endpoints: [markets, market, position, supply, withdraw, supplyCollateral, withdrawCollateral, borrow, repay],
  decodeRevert: decodeMorphoRevert,
};
