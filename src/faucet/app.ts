import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { createHttpApp } from '../http/app.ts';
import { DEFAULT_CONNECTION_LIMITS } from '../http/connections.ts';
import { openapiRoutes } from '../http/openapi.ts';
import type { Faucet } from './faucet.ts';
import { registerFaucetOpenApi } from './openapi.ts';
import { apiRoutes } from './routes/api.ts';
import { pageRoutes } from './routes/page.ts';

export interface FaucetAppOptions {
  faucet: Faucet;
  /** A pino logger for the requests and errors; default: none. */
  logger?: FastifyBaseLogger;
  /** Fastify's trustProxy: behind a proxy, the client address comes from X-Forwarded-For (see config.ts). */
  trustProxy?: boolean | string;
  version?: string;
}

/**
 * The faucet's HTTP server: the JSON API under /api, the page at /, /openapi.json. Errors are answered as on
 * the service (src/http), with the faucet's codes; the page shows the same errors as HTML.
 */
export async function buildFaucetApp(opts: FaucetAppOptions): Promise<FastifyInstance> {
  const app = createHttpApp({
    // The service's limits for slow clients; behind a proxy (trustProxy) every client shares its address: no bound.
    connections: { ...DEFAULT_CONNECTION_LIMITS, ...(opts.trustProxy ? { maxConnectionsPerAddress: 0 } : {}) },
    // No line per request: the sender logs each drip, the error handler each failure; `npm start` stays readable.
    ...(opts.logger && { loggerInstance: opts.logger }),
    trustProxy: opts.trustProxy ?? false,
    // Two short fields: anything bigger is not a drip.
    bodyLimit: 16 * 1024,
  });
  await registerFaucetOpenApi(app, opts.version ?? '0.0.0');
  await app.register(apiRoutes(opts.faucet));
  await app.register(pageRoutes(opts.faucet));
  await app.register(openapiRoutes());
  return app;
}
