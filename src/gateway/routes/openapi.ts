import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';

/** The OpenAPI 3.1 document @fastify/swagger builds from the routes' zod schemas. */
export function openapiRoutes(): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  };
}
