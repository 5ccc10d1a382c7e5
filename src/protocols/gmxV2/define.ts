import type { ChainName } from '../../config/chains.ts';
import { endpointsOf } from '../types.ts';

/** The declarations of this family's endpoints (perp-v2: GMX v2 synthetics). */
export const { read: defineRead, action: defineAction } = endpointsOf<'gmxV2'>();

/** Where the family runs: the spec's arbitrum (Arbitrum Sepolia). */
export const CHAINS: readonly [ChainName, ...ChainName[]] = ['arbitrum'];
