import type { DevnetProtocol } from '../types.ts';
import { deployCompoundV3 } from './deploy.ts';

export { cometAbi } from '../../../protocols/compoundV3/abi.ts';
export { COMPOUND_V3_SALT, cometDeployments } from './deployments.ts';
export { USDC_MARKET } from './market.ts';

/** Compound v3 on the devnet: one Comet, "Compound USDC" (cUSDCv3), on base as on Base Sepolia (README.md). */
export const compoundV3: DevnetProtocol<'compoundV3'> = {
  key: 'compoundV3',
  chains: ['base'],
  deploy: deployCompoundV3,
};
