import type { Address } from 'viem';
import type { TokenInfo } from '../common/amounts.ts';
import type { GmxV2Config } from './config.ts';

/**
 * GMX's wrapped native token (WNT: WETH on Arbitrum). The wallet pays it, and is paid it, as native ETH: sendWnt
 * wraps what it sends, shouldUnwrapNativeToken unwraps what comes back. Balances show it as ETH.
 */
export const nativeEth = (config: GmxV2Config): TokenInfo => ({ symbol: 'ETH', address: config.wnt, decimals: 18, native: true });

export const isWnt = (config: GmxV2Config, token: { address: Address }): boolean => token.address.toLowerCase() === config.wnt.toLowerCase();
