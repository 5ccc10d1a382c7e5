import type { DevnetProtocol } from '../types.ts';
import { deployMorphoBlue } from './deploy.ts';

export { morphoAbi, oracleMockAbi, morphoBlueContracts, MORPHO_BLUE_SALT } from './contracts.ts';
export { DEVNET_LLTVS, DEVNET_PAIR, SEED_SUPPLY, marketId, oraclePrice, type MarketParams } from './markets.ts';

/** Morpho Blue 1.0.0 on the devnet's base chain (Base Sepolia's family): see README.md. */
export const morphoBlue: DevnetProtocol<'morphoBlue'> = {
  key: 'morphoBlue',
  chains: ['base'],
  deploy: deployMorphoBlue,
};
