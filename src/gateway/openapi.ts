import fastifySwagger, { type SwaggerTransformObject } from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, type FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { ERROR_STATUSES, ErrorBodySchema, type ErrorStatus } from '../api/http/index.ts';

/**
 * The OpenAPI side of the gateway: the response helpers every route's schema uses, and /openapi.json, which
 * @fastify/swagger builds from the routes' zod schemas (the contract in src/api/http).
 */

/** A JSON response as Fastify takes it: the schema serializes, the description documents. */
export function jsonResponse<T extends z.ZodType>(description: string, schema: T) {
  return { description, content: { 'application/json': { schema } } };
}

/** The documented error responses of a route, each with the one error body schema. */
export function errorResponses<const S extends ErrorStatus>(
  ...statuses: S[]
): Record<S, ReturnType<typeof jsonResponse<typeof ErrorBodySchema>>> {
  return Object.fromEntries(statuses.map((s) => [s, jsonResponse(ERROR_STATUSES[s], ErrorBodySchema)])) as Record<
    S,
    ReturnType<typeof jsonResponse<typeof ErrorBodySchema>>
  >;
}

type OpenApiDocument = ReturnType<SwaggerTransformObject>;

/** The document without the components.schemas entries nothing refers to (directly or through another one). */
function withoutUnreferencedSchemas(doc: OpenApiDocument): OpenApiDocument {
  if (!('components' in doc) || !doc.components?.schemas) return doc; // (a Swagger 2 document has none)
  const schemas: Record<string, unknown> = doc.components.schemas;
  const refs = (value: unknown) => [...JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
  const referenced = new Set<string>();
  const pending = refs({ ...doc, components: { ...doc.components, schemas: undefined } });
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (referenced.has(name) || !(name in schemas)) continue;
    referenced.add(name);
    pending.push(...refs(schemas[name]));
  }
  const kept = Object.fromEntries(Object.entries(schemas).filter(([name]) => referenced.has(name)));
  return { ...doc, components: { ...doc.components, schemas: kept } } as OpenApiDocument;
}

/**
 * OpenAPI links, which route schemas cannot carry: the request_id that POST /execute answers is what
 * GET /status/{id} takes (clients, and schemathesis's stateful tests, follow it).
 */
const LINKS = [
  {
    path: '/execute',
    method: 'post',
    status: '200',
    name: 'GetStatus',
    link: { operationId: 'getStatus', parameters: { id: '$response.body#/request_id' }, description: 'The state of the request' },
  },
] as const;

function withLinks(doc: OpenApiDocument): OpenApiDocument {
  if (!('openapi' in doc) || !doc.paths) return doc;
  const paths = structuredClone(doc.paths) as Record<string, Record<string, { responses?: Record<string, { links?: object }> }>>;
  for (const { path, method, status, name, link } of LINKS) {
    const response = paths[path]?.[method]?.responses?.[status];
    if (!response) throw new Error(`OpenAPI link ${name}: no response ${status} of ${method.toUpperCase()} ${path}`);
    response.links = { ...response.links, [name]: link };
  }
  return { ...doc, paths } as OpenApiDocument;
}

/**
 * Registers @fastify/swagger. Call it before any route is registered: it collects the routes registered after it.
 * Tags name the groups routes declare.
 */
export async function registerOpenApi(
  app: FastifyInstance,
  opts: { version: string; tags: readonly { name: string; description: string }[] },
): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'agent-wallet',
        version: opts.version,
        description: 'Execute EVM transactions for software agents through ERC-4337 smart wallets.',
      },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
      tags: [...opts.tags],
    },
    transform: jsonSchemaTransform,
    // Adds the zod schemas registered with an id (ErrorBody) under components.schemas, in an input and an
    // output variant; only the ones the document refers to are kept.
    transformObject: (document) => withLinks(withoutUnreferencedSchemas(jsonSchemaTransformObject(document))),
  });
}

/** GET /openapi.json: the OpenAPI 3.1 document. */
export function openapiRoutes(): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  };
}
