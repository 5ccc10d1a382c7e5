import { createPublicClient, createWalletClient, defineChain, http, type Chain, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/**
 * anvil mines each transaction at once: viem's default 4 s polling would make every wait last seconds.
 * (Read by the devnet's own clients; other modules are free to choose theirs.)
 */
export const DEVNET_POLLING_MS = 20;

/** A viem chain for one devnet node. */
export function devnetChain(params: { chainId: number; name: string; rpcUrl: string }): Chain {
  return defineChain({
    id: params.chainId,
    name: `devnet ${params.name}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [params.rpcUrl] } },
  });
}

export function devnetPublicClient(chain: Chain) {
  return createPublicClient({ chain, transport: http(), pollingInterval: DEVNET_POLLING_MS });
}

export function devnetWalletClient(chain: Chain, privateKey: Hex) {
  return createWalletClient({ chain, transport: http(), account: privateKeyToAccount(privateKey), pollingInterval: DEVNET_POLLING_MS });
}
