import { compoundV3 } from './compoundV3/index.ts';
import type { DevnetProtocol } from './types.ts';
import { morphoBlue } from './morphoBlue/index.ts';

export type { DevnetProtocol, ProtocolDeployContext, ProtocolDeployResult } from './types.ts';

/**
 * The protocols the devnet runs for the protocol families (issue: protocol families, part 1), deployed after
 * the service's own contracts, in this order. Each lives in its own folder.
 */
export const DEVNET_PROTOCOLS: readonly DevnetProtocol[] = [
  compoundV3,
  morphoBlue,
];
