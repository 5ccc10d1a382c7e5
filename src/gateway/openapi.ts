import type { FastifyInstance } from 'fastify';
import { registerOpenApi, withoutUnreferencedSchemas, type OpenApiDocument } from '../http/openapi.ts';

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

/** Response headers, which route schemas cannot carry either: each documented on its operation's answers. */
const RESPONSE_HEADERS = [
  {
    path: '/status/{id}',
    method: 'get',
    status: '200',
    headers: {
      ETag: {
        description: 'The record\'s entity tag: it changes whenever the record does. Send it back as If-None-Match with a wait.',
        schema: { type: 'string', examples: ['"kM3o0q2b3pQ0Yz5b2dJcX8mV1rW"'] },
      },
      'Preference-Applied': {
        description: 'With a wait and a known state: `wait=N`, the wait applied (at most 30 s).',
        schema: { type: 'string', examples: ['wait=30'] },
      },
    },
  },
] as const;

function withResponseHeaders(doc: OpenApiDocument): OpenApiDocument {
  if (!('openapi' in doc) || !doc.paths) return doc;
  const paths = structuredClone(doc.paths) as Record<string, Record<string, { responses?: Record<string, { headers?: object }> }>>;
  for (const { path, method, status, headers } of RESPONSE_HEADERS) {
    const response = paths[path]?.[method]?.responses?.[status];
    if (!response) throw new Error(`OpenAPI headers: no response ${status} of ${method.toUpperCase()} ${path}`);
    response.headers = { ...response.headers, ...headers };
  }
  return { ...doc, paths } as OpenApiDocument;
}

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
 * The gateway's /openapi.json (the contract in src/api/http): the service's description, the API key scheme,
 * the links; only the components.schemas some route refers to. Call it before any route is registered.
 */
export function registerGatewayOpenApi(
  app: FastifyInstance,
  opts: { version: string; tags: readonly { name: string; description: string }[] },
): Promise<void> {
  return registerOpenApi(app, {
    info: {
      title: 'agent-wallet',
      version: opts.version,
      description: 'Execute EVM transactions for software agents through ERC-4337 smart wallets.',
    },
    tags: opts.tags,
    securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    finish: (doc) => withResponseHeaders(withLinks(withoutUnreferencedSchemas(doc))),
  });
}
