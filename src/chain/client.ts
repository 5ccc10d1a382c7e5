import { createPublicClient, defineChain, type Chain, type PublicClient, type Transport } from 'viem';
import type { ChainConfig } from '../config/chainConfig.ts';
import { batchingHttp, type FailoverOptions } from './rpcTransport.ts';

export type ChainClient = PublicClient<Transport, Chain>;

export interface CreateChainClientOptions {
  /**
   * Timeout of one attempt on one endpoint; past it the next endpoint is tried, and a chain none of whose endpoints
   * answers in time is `rpc_unavailable`.
   */
  timeoutMs?: number;
  /** viem's default is 4 s, far too slow for a devnet that mines on every transaction. */
  pollingIntervalMs?: number;
  /** How the transport moves between `rpcUrl` and `fallbackRpcUrls` (defaults in rpcTransport.ts). */
  failover?: FailoverOptions;
}

/** The read client of one chain (viem public client over batched, keep-alive JSON-RPC). */
export function createChainClient(config: ChainConfig, opts: CreateChainClientOptions = {}): ChainClient {
  const chain = defineChain({
    id: config.chainId,
    name: config.name,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [config.rpcUrl, ...(config.fallbackRpcUrls ?? [])] } },
  });
  return createPublicClient({
    chain,
    // The primary first, then the fallbacks: the transport fails over and backs off on 429 (rpcTransport.ts).
    transport: batchingHttp([config.rpcUrl, ...(config.fallbackRpcUrls ?? [])], {
      timeoutMs: opts.timeoutMs ?? 15_000,
      retryCount: 2,
      retryDelay: 50,
      ...(opts.failover && { failover: opts.failover }),
    }),
    pollingInterval: opts.pollingIntervalMs ?? 50,
    cacheTime: 0,
  });
}
