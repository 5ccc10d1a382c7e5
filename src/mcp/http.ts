import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
  type McpServer,
} from '@modelcontextprotocol/server';

export const MCP_PATH = '/mcp';
/** Larger bodies are refused before they are read: a tool call's arguments are small. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface McpHttpOptions {
  host: string;
  port: number;
  /**
   * Required off loopback: clients must send `Authorization: Bearer <token>`. The server acts with the API key
   * it holds, so whoever reaches it spends from those wallets.
   */
  bearerToken?: string | undefined;
}

export interface RunningMcpHttp {
  url: string;
  close(): Promise<void>;
}

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || /^127\./.test(host);

/**
 * Serves the MCP server over streamable HTTP at `/mcp` (the SDK's web-standard handler behind node:http). On
 * loopback the Host and Origin headers must name this machine (DNS-rebinding protection, as the SDK advises);
 * elsewhere a bearer token is required.
 */
export async function serveMcpHttp(factory: () => McpServer, o: McpHttpOptions): Promise<RunningMcpHttp> {
  if (!isLoopback(o.host) && !o.bearerToken) {
    throw new Error(`refusing to serve MCP on ${o.host} without a bearer token (set AGENT_WALLET_MCP_TOKEN): it spends from this API key's wallets`);
  }
  const handler = createMcpHandler(factory);
  const expected = o.bearerToken ? Buffer.from(`Bearer ${o.bearerToken}`) : undefined;

  const server: Server = createServer((req, res) => {
    serve(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'internal_error', message: (e as Error).message }));
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
    if (url.pathname !== MCP_PATH) return reply(res, 404, { error: 'not_found', message: `MCP is served at ${MCP_PATH}` });
    if (expected) {
      const got = Buffer.from(req.headers.authorization ?? '');
      if (got.length !== expected.length || !timingSafeEqual(got, expected)) {
        return reply(res, 401, { error: 'unauthorized', message: 'missing or wrong Authorization: Bearer token' }, { 'www-authenticate': 'Bearer' });
      }
    }
    const body = req.method === 'GET' || req.method === 'HEAD' || req.method === 'DELETE' ? undefined : await readBody(req);
    if (body === null) return reply(res, 413, { error: 'payload_too_large', message: `bodies are at most ${MAX_BODY_BYTES} bytes` });
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    const request = new Request(url, { method: req.method ?? 'GET', headers, ...(body !== undefined && { body }) });
    if (!expected) {
      const rejected = hostHeaderValidationResponse(request, localhostAllowedHostnames()) ?? originValidationResponse(request, localhostAllowedOrigins());
      if (rejected) return pipe(rejected, res);
    }
    return pipe(await handler.fetch(request), res);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${shownHost}:${port}${MCP_PATH}`,
    async close() {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** A web Response onto a node response, streamed (an SSE answer arrives as it is written). */
async function pipe(response: Response, res: ServerResponse): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) for await (const chunk of response.body) res.write(chunk);
  res.end();
}

function reply(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
