import { result, shownUrl, type CheckResult, type DoctorCheck } from '../types.ts';

/**
 * Each fallback RPC URL answers for the configured chain. The worker checks the chain id once at start, on
 * whichever endpoint answers; a fallback of another chain would show only when the primary fails (and then sign
 * reads and sends against the wrong chain's state), so each is asked here, directly.
 */
export const fallbackRpcsCheck: DoctorCheck = {
  id: 'rpc.fallback',
  summary: 'every fallback RPC URL answers eth_chainId with the configured chainId',
  async run(ctx) {
    const { chainId, fallbackRpcUrls } = ctx.target.config;
    const out: CheckResult[] = [];
    for (const [i, url] of (fallbackRpcUrls ?? []).entries()) {
      const id = `rpc.fallback-${i + 1}`;
      let answered: number;
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
          signal: AbortSignal.timeout(10_000),
        });
        answered = Number(((await response.json()) as { result?: string }).result);
      } catch (e) {
        out.push(result(ctx, id, 'warn', `fallback ${shownUrl(url)} does not answer eth_chainId (${(e as Error).message})`, 'check the URL and its API key: until it answers, the chain has one endpoint fewer'));
        continue;
      }
      out.push(
        answered === chainId
          ? result(ctx, id, 'ok', `fallback ${shownUrl(url)} serves chain ${chainId}`)
          : result(ctx, id, 'fail', `fallback ${shownUrl(url)} answers chain id ${answered}; the configuration says ${chainId}`, `remove it from fallbackRpcUrls or point it at a node of chain ${chainId}`),
      );
    }
    return out;
  },
};
