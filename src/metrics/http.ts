import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Metrics } from './registry.ts';

/** Route label of requests no route matched (404s, and the 405s answered before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * An onResponse hook for the gateway's root instance: `agentwallet_http_requests_total{route,method,status}`
 * and `agentwallet_http_request_duration_seconds{route,method}`. `route` is the route's pattern
 * (`/status/:id`), never the URL: one series per request id would be unbounded.
 */
export function httpMetricsHook(metrics: Metrics) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    const method = request.method;
    metrics.httpRequests.inc({ route, method, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ route, method }, reply.elapsedTime / 1000);
  };
}

/**
 * `GET /metrics` on the gateway, for the embedded mode (one process, one port). Hidden from /openapi.json:
 * it is an operations endpoint in Prometheus's text format, not part of the API clients program against.
 * The cluster's gateway serves it on the ops port instead (src/ops/server.ts).
 */
export function metricsRoutes(metrics: Metrics): FastifyPluginAsync {
  return async (app) => {
    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      const body = await metrics.scrape();
      return reply.type(metrics.contentType).send(body);
    });
  };
}

/** What buildGateway takes besides GatewayDeps for metrics. */
export interface GatewayMetricsDeps {
  /** Counts and times every request (the hook above). */
  metrics?: Metrics;
  /** Also serve GET /metrics on the gateway's own port: the embedded mode (the cluster uses the ops port). */
  serveMetrics?: boolean;
}
