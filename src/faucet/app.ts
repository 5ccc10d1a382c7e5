import { randomUUID } from 'node:crypto';
import fastifySwagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { connectionOptions, DEFAULT_CONNECTION_LIMITS, guardConnections, type ConnectionLimits } from '../gateway/connections.ts';
import { handleError, handleNotFound } from '../gateway/errors.ts';
import type { Faucet } from './faucet.ts';
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
 * The faucet's HTTP server: the JSON API under /api, the page at /, /openapi.json. One error handler, the
 * gateway's, so every error has the service's body and codes; the page shows the same errors as HTML.
 */
export async function buildFaucetApp(opts: FaucetAppOptions): Promise<FastifyInstance> {
  // The gateway's limits for slow clients; behind a proxy (trustProxy) every client shares its address: no bound.
  const limits: ConnectionLimits = { ...DEFAULT_CONNECTION_LIMITS, ...(opts.trustProxy ? { maxConnectionsPerAddress: 0 } : {}) };
  const app = Fastify({
    ...connectionOptions(limits),
    ...(opts.logger ? { loggerInstance: opts.logger } : { logger: false }),
    // No line per request: the sender logs each drip, the error handler each failure; `npm start` stays readable.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: opts.trustProxy ?? false,
    // Two short fields: anything bigger is not a drip.
    bodyLimit: 16 * 1024,
    onProtoPoisoning: 'remove',
    onConstructorPoisoning: 'remove',
    genReqId: () => randomUUID(),
    frameworkErrors: (error, request, reply) => handleError(error, request, reply),
  }).withTypeProvider<ZodTypeProvider>();
  guardConnections(app, limits);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);
  app.removeContentTypeParser('text/plain');
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-trace-id', request.id);
  });

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'agent-wallet aUSD faucet',
        version: opts.version ?? '0.0.0',
        description: 'Sends aUSD test tokens to an agent smart wallet (spec §2.7). Errors: `{ error, message, ... }` as on the service.',
      },
      tags: [{ name: 'faucet', description: 'No API key needed; rate-limited per address and per client address' }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(apiRoutes(opts.faucet));
  await app.register(pageRoutes(opts.faucet));
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
