import type { DevnetProtocol } from '../types.ts';
import { deployAaveV3 } from './deploy.ts';

/** Aave v3 (core 1.19.3, periphery 3.0.1) on the devnet's ethereum chain: see README.md. */
export const aaveV3: DevnetProtocol<'aaveV3'> = {
  key: 'aaveV3',
  chains: ['ethereum'],
  deploy: deployAaveV3,
};
