import { aaveV3 } from './aaveV3/index.ts';
import type { DevnetProtocol } from './types.ts';

export type { DevnetProtocol, ProtocolDeployContext, ProtocolDeployResult } from './types.ts';

/**
 * The protocols the devnet runs for the protocol families (issue: protocol families, part 1), deployed after
 * the service's own contracts, in this order. Each lives in its own folder.
 */
export const DEVNET_PROTOCOLS: readonly DevnetProtocol[] = [aaveV3];
