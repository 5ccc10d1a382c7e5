import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { connectionOptions, guardConnections, type ConnectionLimits } from './connections.ts';
import { createErrorHandler, handleNotFound, type ErrorHandler, type OperationalErrors } from './errorHandler.ts';

/**
 * How an app answers errors.
 * - `api` (the gateway, the faucet): the API's conventions. Bodies `{ error, message, ...details }` with its
 *   codes, the app's operational errors as 503s, a trace id on every answer, JSON bodies only, and
 *   `__proto__`/`constructor.prototype` keys dropped while parsing, like any unknown field (Fastify's default
 *   answers valid JSON 400).
 * - `own` (the admin socket, whose one caller is our CLI): the app's handler, Fastify's defaults otherwise.
 */
export type ErrorAnswers = { kind: 'api'; operational?: OperationalErrors } | { kind: 'own'; handler: ErrorHandler };

export interface HttpAppOptions {
  /** Fastify's logger options; or `loggerInstance`, a pino logger. Default: no logging. */
  logger?: FastifyServerOptions['logger'];
  loggerInstance?: FastifyBaseLogger;
  /** Fastify's line per request and response. Default: off. */
  requestLogging?: boolean;
  /** Bounds for slow, idle and too many clients (connections.ts): for a TCP listener. Default: Node's. */
  connections?: ConnectionLimits;
  bodyLimit?: number;
  /** Behind a proxy, the client address comes from X-Forwarded-For. */
  trustProxy?: boolean | string;
  routerOptions?: FastifyServerOptions['routerOptions'];
  /** Default: the API's conventions. */
  errors?: ErrorAnswers;
}

/** A Fastify app with the zod type provider (routes validate, serialize and document with zod schemas). */
export function createHttpApp(opts: HttpAppOptions = {}) {
  const errors = opts.errors ?? { kind: 'api' };
  const handleError = errors.kind === 'api' ? createErrorHandler(errors.operational) : errors.handler;
  const app = Fastify({
    ...(opts.connections && connectionOptions(opts.connections)),
    ...(opts.loggerInstance ? { loggerInstance: opts.loggerInstance } : { logger: opts.logger ?? false }),
    logController: new LogController({ disableRequestLogging: !opts.requestLogging }),
    ...(opts.bodyLimit !== undefined && { bodyLimit: opts.bodyLimit }),
    ...(opts.trustProxy !== undefined && { trustProxy: opts.trustProxy }),
    ...(opts.routerOptions && { routerOptions: opts.routerOptions }),
    ...(errors.kind === 'api' && {
      onProtoPoisoning: 'remove',
      onConstructorPoisoning: 'remove',
      // Our own trace ids, never taken from the client; `req-N` (Fastify's default) would read like a request_id.
      genReqId: () => randomUUID(),
      // Errors raised before routing (bad URL encoding, over-long path parameter) get the API's body too.
      frameworkErrors: handleError,
    }),
  }).withTypeProvider<ZodTypeProvider>();

  if (opts.connections) guardConnections(app, opts.connections);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(handleError);
  if (errors.kind === 'api') {
    app.setNotFoundHandler(handleNotFound);
    // Bodies are JSON only (spec §4): anything else is 415, rather than a string failing validation.
    app.removeContentTypeParser('text/plain');
    app.addHook('onRequest', async (request, reply) => {
      reply.header('x-trace-id', request.id);
    });
  }
  return app;
}

export type HttpApp = ReturnType<typeof createHttpApp>;
