import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface OpsServerOptions {
  /** Default 0.0.0.0: the kubelet probes and Prometheus scrapes come to the pod's IP. */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /** What /metrics serves. */
  registry: Registry;
  /**
   * /livez: false makes the kubelet restart the container; only for a process that cannot recover by itself
   * (a wedged event loop answers no probe at all anyway). Default: always live.
   */
  live?: () => boolean;
  /** /readyz: whether this role should get traffic now (store synced, chain answering, ...). */
  ready: () => boolean | Promise<boolean>;
  /** A readiness check that takes longer than this counts as not ready (default 2000 ms). */
  readyTimeoutMs?: number;
}

export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * The small HTTP server every cluster role runs on its ops port: `/metrics` (Prometheus text format),
 * `/livez` and `/readyz` (200 or 503, with a one-field JSON body). Plain node:http: three fixed routes need
 * no framework, and this server must keep answering when the role's own server is what is in trouble.
 */
export async function startOpsServer(opts: OpsServerOptions): Promise<OpsServer> {
  const readyTimeoutMs = opts.readyTimeoutMs ?? 2_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics' && path !== '/livez' && path !== '/readyz') return send(res, 404, 'application/json', json({ status: 'not found' }));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return send(res, 405, 'application/json', json({ status: 'method not allowed' }));
    }
    switch (path) {
      case '/metrics':
        return send(res, 200, opts.registry.contentType, await opts.registry.metrics());
      case '/livez': {
        const live = opts.live?.() ?? true;
        return send(res, live ? 200 : 503, 'application/json', json({ status: live ? 'ok' : 'not live' }));
      }
      case '/readyz': {
        const ready = await withTimeout(Promise.resolve().then(opts.ready), readyTimeoutMs).catch(() => false);
        return send(res, ready ? 200 : 503, 'application/json', json({ status: ready ? 'ok' : 'not ready' }));
      }
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, 'application/json', json({ status: 'error' }));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });

  let closed: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Prometheus keeps its scrape connection alive: without this, close() would wait for it to time out.
        server.closeAllConnections();
      })),
  };
}

const json = (body: Record<string, string>): string => `${JSON.stringify(body)}\n`;

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
