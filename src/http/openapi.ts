import fastifySwagger, { type SwaggerTransformObject } from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, type FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { ERROR_STATUSES, ErrorBodySchema } from '../api/http/index.ts';

/**
 * The OpenAPI side of an app: the response helpers every route's schema uses, and /openapi.json, which
 * @fastify/swagger builds from the routes' zod schemas.
 */

/** A JSON response as Fastify takes it: the schema serializes, the description documents. */
export function jsonResponse<T extends z.ZodType>(description: string, schema: T) {
  return { description, content: { 'application/json': { schema } } };
}

type ErrorResponse = ReturnType<typeof jsonResponse<typeof ErrorBodySchema>>;

/** The documented error responses of an app's routes: each status with its meaning there and the one error body schema. */
export function errorResponsesOf<const D extends Readonly<Record<number, string>>>(meanings: D) {
  return <const S extends keyof D & number>(...statuses: S[]): Record<S, ErrorResponse> =>
    Object.fromEntries(statuses.map((s) => [s, jsonResponse(meanings[s]!, ErrorBodySchema)])) as Record<S, ErrorResponse>;
}

/** The API's error responses (what each status means on the service: src/api/http). */
export const errorResponses = errorResponsesOf(ERROR_STATUSES);

export type OpenApiDocument = ReturnType<SwaggerTransformObject>;

/** The document without the components.schemas entries nothing refers to (directly or through another one). */
export function withoutUnreferencedSchemas(doc: OpenApiDocument): OpenApiDocument {
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

export interface OpenApiOptions {
  info: { title: string; version: string; description: string };
  /** The groups routes declare. */
  tags: readonly { name: string; description: string }[];
  securitySchemes?: Record<string, { type: 'apiKey'; in: 'header'; name: string }>;
  /** A last step over the generated document (the gateway drops unreferenced schemas and adds links). */
  finish?: (doc: OpenApiDocument) => OpenApiDocument;
}

/** Registers @fastify/swagger. Call it before any route is registered: it collects the routes registered after it. */
export async function registerOpenApi(app: FastifyInstance, opts: OpenApiOptions): Promise<void> {
  const finish = opts.finish ?? ((doc) => doc);
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: opts.info,
      ...(opts.securitySchemes && { components: { securitySchemes: opts.securitySchemes } }),
      tags: [...opts.tags],
    },
    transform: jsonSchemaTransform,
    // Adds the zod schemas registered with an id (ErrorBody) under components.schemas, in an input and an
    // output variant.
    transformObject: (document) => finish(jsonSchemaTransformObject(document)),
  });
}

/** GET /openapi.json: the OpenAPI 3.1 document. */
export function openapiRoutes(): FastifyPluginAsyncZod {
  return async (app) => {
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  };
}
