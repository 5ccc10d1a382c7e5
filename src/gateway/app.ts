import { readFileSync } from 'node:fs';
import type { FastifyInstance, HTTPMethods } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { DEFAULT_NAMESPACE } from '../api/v1alpha1/index.ts';
import { createHttpApp } from '../http/app.ts';
import { DEFAULT_CONNECTION_LIMITS } from '../http/connections.ts';
import { handleNotFound } from '../http/errorHandler.ts';
import { openapiRoutes } from '../http/openapi.ts';
import { httpMetricsHook, metricsRoutes, type GatewayMetricsDeps } from '../metrics/http.ts';
import { DEFAULT_PAYMENT_SETTINGS } from '../payments/settings.ts';
import { agentScopeHook } from './agentScope.ts';
import { authHook } from './auth.ts';
import type { GatewayContext, GatewayDeps } from './context.ts';
import { createDecisionWaiter } from './decisionWaiter.ts';
import { createWaitSlots } from './waitSlots.ts';
import { GatewayError, gatewayOperationalErrors } from './errors.ts';
import { startPolicyView } from './policyView.ts';
import { startExecutionInformer } from './executionInformer.ts';
import { startApiClientView } from './apiClientView.ts';
import { createInMemoryRateLimiter } from '../ratelimit/index.ts';
import { perAddressRateLimit, perKeyRateLimit } from './rateLimitHook.ts';
import { executeRoutes } from './routes/execute.ts';
import { feedRoutes } from './routes/feed.ts';
import { healthRoutes } from './routes/health.ts';
import { parseQueryString } from './queryString.ts';
import { registerGatewayOpenApi } from './openapi.ts';
import { simulateRoutes } from './routes/simulate.ts';
import { policyRoutes } from './routes/policy.ts';
import { statusRoutes } from './routes/status.ts';
import { cancelRoutes } from './routes/cancel.ts';
import { FAMILIES } from '../protocols/index.ts';
import { protocolRoutes } from './routes/protocols.ts';
import { walletRoutes } from './routes/wallet.ts';
import { createCallbackGuard } from '../lib/egress/egress.ts';

const DEFAULTS = {
  namespace: DEFAULT_NAMESPACE,
  decisionTimeoutMs: 30_000,
  statusWaitsPerKey: 20,
  bodyLimitBytes: 1024 * 1024,
  publicRateLimit: { requestsPerSecond: 20, burst: 40 },
};

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}

/**
 * The methods the router has a route for at this URL (HEAD included where GET is): the `Allow` of a 405. A
 * wildcard match (the `/protocols/*` catch-all, which answers its own 404s) is not a method the path has.
 */
function allowedMethods(app: FastifyInstance, url: string): string[] {
  return app.supportedMethods.filter((method) => {
    try {
      const route = app.findRoute({ method: method as HTTPMethods, url });
      return route !== null && !('*' in (route.params as Record<string, unknown>));
    } catch {
      return false; // e.g. a path parameter over maxParamLength: no route
    }
  });
}

/**
 * The HTTP gateway: stateless apart from its shared watch of ExecutionRequests. It validates, authenticates,
 * rate-limits and creates resources; the controllers do the rest. Call `close()` to stop the watch (the store
 * and the chain workers belong to the caller and stay open).
 */
export async function buildGateway(deps: GatewayDeps & GatewayMetricsDeps): Promise<FastifyInstance> {
  const namespace = deps.namespace ?? DEFAULTS.namespace;
  const app = createHttpApp({
    // Timeouts for slow and idle clients, and the per-address bound (src/http/connections.ts).
    connections: { ...DEFAULT_CONNECTION_LIMITS, ...deps.connections },
    logger: deps.logger ?? false,
    requestLogging: deps.requestLogLevel !== 'debug',
    bodyLimit: deps.bodyLimitBytes ?? DEFAULTS.bodyLimitBytes,
    // Any valid resource name (≤ 253) routes to GET /status/:id and gets its 404; only absurd ids meet 414.
    routerOptions: { maxParamLength: 1024, querystringParser: parseQueryString },
    errors: { kind: 'api', operational: gatewayOperationalErrors },
  });

  app.addHook('onRequest', async (request, reply) => {
    // Decided before anything reads the body (whose parsing could fail first): a path that exists with other
    // methods is 405 with Allow, any other unknown route 404. No API key is needed to learn either: the routes
    // are public in /openapi.json.
    if (!request.is404) return;
    const allowed = allowedMethods(app, request.url);
    if (allowed.length === 0) return handleNotFound(request, reply);
    throw new GatewayError(
      405,
      'method_not_allowed',
      `${request.method} is not allowed on ${request.url.split('?')[0]}; allowed: ${allowed.join(', ')}`,
      { headers: { allow: allowed.join(', ') } },
    );
  });

  if (deps.metrics) app.addHook('onResponse', httpMetricsHook(deps.metrics));
  if (deps.requestLogLevel === 'debug') {
    app.addHook('onResponse', async (request, reply) => {
      request.log.debug({ status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, `${request.method} ${request.url}`);
    });
  }

  const informer = startExecutionInformer(deps.store, { namespace, logger: app.log });
  app.addHook('onClose', () => informer.stop());
  const policies = startPolicyView(deps.store, { namespace, logger: app.log });
  app.addHook('onClose', () => policies.stop());
  const apiClients = startApiClientView(deps.store, { namespace, logger: app.log });
  app.addHook('onClose', () => apiClients.stop());

  const version = deps.version ?? packageVersion();
  const ctx: GatewayContext = {
    store: deps.store,
    namespace,
    workers: deps.workers,
    payments: {
      terms: deps.payments?.terms ?? new Map(),
      settings: deps.payments?.settings ?? DEFAULT_PAYMENT_SETTINGS,
      x402: deps.payments?.x402 ?? false,
    },
    archive: deps.archive,
    protocols: deps.protocols ?? new Map(),
    families: deps.families ?? FAMILIES,
    prices: deps.prices ?? new Map(),
    rateLimiter: deps.rateLimiter ?? createInMemoryRateLimiter(),
    publicRateLimit: deps.publicRateLimit ?? DEFAULTS.publicRateLimit,
    decisionTimeoutMs: deps.decisionTimeoutMs ?? DEFAULTS.decisionTimeoutMs,
    version,
    startedAt: Date.now(),
    informer,
    policies,
    apiClients,
    onPolicyDecision: (spec, d) => {
      deps.metrics?.policyDecisions.inc({ where: 'gateway', decision: d.allowed ? 'allowed' : d.code });
      if (!d.allowed) app.log.info({ apiClient: spec.apiClient, agentId: spec.agentId, policy: d.policy, rule: d.rule, code: d.code, callIndex: d.callIndex }, `policy refused: ${d.message}`);
    },
    waiter: createDecisionWaiter(informer),
    statusWaits: deps.statusWaits ?? createWaitSlots(DEFAULTS.statusWaitsPerKey),
    callbackGuard: deps.callbackGuard ?? createCallbackGuard(),
  };

  // First: @fastify/swagger collects the routes registered after it.
  await registerGatewayOpenApi(app, {
    version,
    tags: [
      { name: 'public', description: 'No API key needed' },
      { name: 'wallet', description: 'Smart wallet resolution and balances' },
      { name: 'execution', description: 'Simulation, execution and status' },
      { name: 'protocols', description: 'Typed endpoint families of DeFi protocols (spec 4.3): reads, and actions that execute as POST /execute does' },
      { name: 'policy', description: 'The policies that govern an agent (written by the operator): read them, dry-run a body against them' },
    ],
  });

  const publicScope: FastifyPluginAsyncZod = async (scope) => {
    if (ctx.publicRateLimit) scope.addHook('onRequest', perAddressRateLimit(ctx.rateLimiter, ctx.publicRateLimit));
    await scope.register(healthRoutes(ctx));
    await scope.register(feedRoutes(ctx));
    await scope.register(openapiRoutes());
    if (deps.metrics && deps.serveMetrics) await scope.register(metricsRoutes(deps.metrics));
  };

  // Encapsulated: the auth and rate-limit hooks apply to these routes only, in this order.
  const protectedScope: FastifyPluginAsyncZod = async (scope) => {
    scope.addHook('onRequest', authHook(ctx));
    scope.addHook('onRequest', perKeyRateLimit(ctx.rateLimiter));
    // After validation: the agent_id it checks is the validated one.
    scope.addHook('preHandler', agentScopeHook);
    await scope.register(walletRoutes(ctx));
    await scope.register(simulateRoutes(ctx));
    await scope.register(executeRoutes(ctx));
    await scope.register(statusRoutes(ctx));
    await scope.register(cancelRoutes(ctx));
    await scope.register(protocolRoutes(ctx));
    await scope.register(policyRoutes(ctx));
  };

  await app.register(publicScope);
  await app.register(protectedScope);
  return app;
}
