import type { DevnetProtocol } from '../types.ts';
import { deployGmxV2 } from './deploy.ts';
import { runGmxV2 } from './run.ts';

export { GMX_V2_SALT, gmxDeployments } from './deployments.ts';
export { ETH_USD_MARKET } from './market.ts';
export { GMX_KEEPER_DELAY_ENV, GMX_KEEPER_DELAY_MS_DEFAULT } from './run.ts';

/**
 * GMX v2 (synthetics) on the devnet: ABI-compatible contracts for one market, ETH/USD [WETH-USDC], on arbitrum,
 * with a price server (GMX's oracle keeper API) and an order keeper running beside them (README.md).
 */
export const gmxV2: DevnetProtocol<'gmxV2'> = {
  key: 'gmxV2',
  chains: ['arbitrum'],
  deploy: deployGmxV2,
  run: runGmxV2,
};
