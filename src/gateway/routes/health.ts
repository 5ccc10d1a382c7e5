import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { CHAIN_IDS, CHAIN_NETWORK_NAMES, type ChainName } from '../../config/chains.ts';
import { workerFor, type GatewayContext } from '../context.ts';
import { HealthSchema, type Health } from '../../api/http/index.ts';
import { errorResponses, jsonResponse } from '../../http/openapi.ts';
import { createChainHistoryCheck } from '../chainHistory.ts';
import { availabilityOf } from '../protocols/availability.ts';
import type { Logger } from '../../lib/logger.ts';

type ChainHealth = Health['chains'][number];

const PROBE_TIMEOUT_MS = 2_000;
/** Public endpoint: chain probes are shared by all callers for this long, so /health cannot flood an RPC. */
const PROBE_CACHE_MS = 2_000;

function chainHealth(ctx: GatewayContext, log: Logger): (chain: ChainName) => Promise<ChainHealth> {
  const cache = new Map<ChainName, { at: number; value: Promise<ChainHealth> }>();
  const base = (chain: ChainName) => ({ chain, network: CHAIN_NETWORK_NAMES[chain], chain_id: CHAIN_IDS[chain] });
  const history = createChainHistoryCheck(ctx.informer, log, ctx.archive && { store: ctx.archive, namespace: ctx.namespace });

  const probe = async (chain: ChainName): Promise<ChainHealth> => {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const worker = workerFor(ctx, chain);
    try {
      const [head, hist] = await Promise.race([
        Promise.all([worker.getHead(), history(chain, worker)]),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`probe timed out after ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
        }),
      ]);
      const latency = Math.round(performance.now() - started);
      return { ...base(chain), reachable: true, block_number: String(head.blockNumber), latency_ms: latency, ...hist };
    } catch {
      return { ...base(chain), reachable: false, block_number: null, latency_ms: null, history: 'unknown', history_detail: null };
    } finally {
      clearTimeout(timer);
    }
  };

  return (chain) => {
    const hit = cache.get(chain);
    if (hit && performance.now() - hit.at < PROBE_CACHE_MS) return hit.value;
    const value = probe(chain);
    cache.set(chain, { at: performance.now(), value });
    return value;
  };
}

export function healthRoutes(ctx: GatewayContext): FastifyPluginAsyncZod {
  return async (app) => {
    const health = chainHealth(ctx, app.log);
    app.get(
      '/health',
      {
        schema: {
          tags: ['public'],
          operationId: 'getHealth',
          summary: 'Service health: version, uptime, state store sync and each served chain’s head block',
          response: {
            200: jsonResponse('Health report (also when degraded: read `status`)', HealthSchema),
            503: jsonResponse('The state store cannot write: executions are refused until it can (same body)', HealthSchema),
            ...errorResponses(429, 500),
          },
        },
      },
      async (_request, reply) => {
        const [chains, protocols] = await Promise.all([Promise.all([...ctx.workers.keys()].map(health)), availabilityOf(ctx).report()]);
        const store = ctx.store.health();
        const ok =
          store.writable && ctx.informer.synced && chains.every((c) => c.reachable !== false && c.history !== 'mismatch') && protocols.every((p) => p.available);
        // A store that cannot write is the one state in which the service cannot do its job at all: 503, so a
        // load balancer or monitor that only reads status codes sees it. Chains and sync lag are `degraded`.
        if (!store.writable) reply.code(503);
        return {
          status: ok ? ('ok' as const) : ('degraded' as const),
          version: ctx.version,
          uptime_seconds: Math.round((Date.now() - ctx.startedAt) / 1000),
          time: new Date().toISOString(),
          store: {
            synced: ctx.informer.synced,
            writable: store.writable,
            ...(!store.writable && { reason: store.reason, since: store.since }),
          },
          chains,
          protocols,
        };
      },
    );
  };
}
