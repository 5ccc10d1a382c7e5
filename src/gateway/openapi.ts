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
    finish: (doc) => withLinks(withoutUnreferencedSchemas(doc)),
  });
}
