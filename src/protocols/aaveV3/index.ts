import type { ProtocolFamily } from '../types.ts';
import { AaveV3ConfigSchema } from './config.ts';
import { balances } from './endpoints/balances.ts';
import { borrow } from './endpoints/borrow.ts';
import { position } from './endpoints/position.ts';
import { repay } from './endpoints/repay.ts';
import { supply } from './endpoints/supply.ts';
import { withdraw } from './endpoints/withdraw.ts';
import { decodeAaveRevert } from './errors.ts';
import { PositionSchema } from './position.ts';

/** `lend-a-v3`: Aave v3's Pool on ethereum (Sepolia). docs/protocols/lend-a-v3.md. */
export const aaveV3Family: ProtocolFamily<'aaveV3'> = {
  slug: 'lend-a-v3',
  aliases: ['aave-v3'],
  protocol: 'Aave v3',
  key: 'aaveV3',
  config: AaveV3ConfigSchema,
  chains: ['ethereum'],
  description: 'Aave v3 lending on ethereum: supply tokens (they earn interest and count as collateral), borrow at the variable rate, repay, withdraw.',
  position: PositionSchema,
  // The spec's order (4.3).
  endpoints: [balances, position, supply, withdraw, repay, borrow],
  decodeRevert: decodeAaveRevert,
};
