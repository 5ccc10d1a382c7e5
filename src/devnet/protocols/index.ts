import { aaveV3 } from './aaveV3/index.ts';
import { compoundV3 } from './compoundV3/index.ts';
import { gmxV2 } from './gmxV2/index.ts';
import { morphoBlue } from './morphoBlue/index.ts';
import { uniswapV3 } from './uniswapV3/index.ts';
import { uniswapV4 } from './uniswapV4/index.ts';
import type { DevnetProtocol } from './types.ts';

export type { DevnetProtocol, DevnetProtocolOptions, ProtocolDeployContext, ProtocolDeployResult, ProtocolRun, ProtocolRunContext } from './types.ts';

/**
 * The protocols the devnet runs for the protocol families, each in its own folder, deployed after the service's own
 * contracts (on a chain, one after another: they share the protocol deployer's account). Their addresses do not
 * depend on this order (CREATE2).
 */
export const DEVNET_PROTOCOLS: readonly DevnetProtocol[] = [aaveV3, compoundV3, gmxV2, morphoBlue, uniswapV3, uniswapV4];
