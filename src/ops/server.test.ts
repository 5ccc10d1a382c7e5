import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../metrics/registry.ts';
import { parseExposition } from '../metrics/testing/exposition.ts';
import { startOpsServer, type OpsServer } from './server.ts';

describe('ops server', () => {
  const servers: OpsServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function start(opts: Partial<Parameters<typeof startOpsServer>[0]> = {}) {
    const metrics = createMetrics();
    const server = await startOpsServer({ host: '127.0.0.1', port: 0, registry: metrics.registry, ready: () => true, ...opts });
    servers.push(server);
    const base = `http://127.0.0.1:${server.port}`;
    return { metrics, server, get: (path: string, init?: RequestInit) => fetch(base + path, init) };
  }

  it('serves the registry at /metrics in the Prometheus text format', async () => {
    const { metrics, get } = await start();
    metrics.webhookDelivered('gone');
    const res = await get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const e = parseExposition(await res.text());
    expect(e.value('agentwallet_webhook_deliveries_total', { result: 'gone' })).toBe(1);
    expect(e.types.get('process_resident_memory_bytes')).toBe('gauge');
  });

  it('answers /livez and /readyz 200 or 503 with a short JSON body, following the callbacks', async () => {
    let live = true;
    let ready: boolean | Error = false;
    const { get } = await start({
      live: () => live,
      ready: async () => {
        if (ready instanceof Error) throw ready;
        return ready;
      },
    });
    const probe = async (path: string) => {
      const res = await get(path);
      return { status: res.status, type: res.headers.get('content-type'), body: await res.json() };
    };
    expect(await probe('/livez')).toEqual({ status: 200, type: 'application/json', body: { status: 'ok' } });
    expect(await probe('/readyz')).toEqual({ status: 503, type: 'application/json', body: { status: 'not ready' } });
    ready = true;
    expect((await probe('/readyz')).status).toBe(200);
    ready = new Error('store unreachable'); // a check that throws is "not ready", never a 500
    expect(await probe('/readyz')).toMatchObject({ status: 503, body: { status: 'not ready' } });
    live = false;
    expect(await probe('/livez')).toMatchObject({ status: 503, body: { status: 'not live' } });
  });

  it('treats a readiness check slower than readyTimeoutMs as not ready', async () => {
    const { get } = await start({ ready: () => new Promise<boolean>((r) => setTimeout(() => r(true), 1_000)), readyTimeoutMs: 50 });
    // The check answers `ready` after 1 s: a 503 means the probe gave up at its timeout instead of waiting.
    expect((await get('/readyz')).status).toBe(503);
  });

  it('is live by default, 404s other paths, 405s other methods with Allow, and answers HEAD without a body', async () => {
    const { get } = await start();
    expect((await get('/livez')).status).toBe(200);
    expect((await get('/metricsx')).status).toBe(404);
    expect((await get('/readyz?verbose=1')).status).toBe(200); // the query string does not change the route
    const post = await get('/metrics', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await get('/metrics', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('closes promptly, cutting a request still in flight (a scrape or a slow probe)', async () => {
    const { server } = await start({ ready: () => new Promise<boolean>((r) => setTimeout(() => r(true), 5_000)), readyTimeoutMs: 10_000 });
    const inFlight = new Promise<string>((resolve) => {
      request({ host: '127.0.0.1', port: server.port, path: '/readyz' }, (res) => resolve(`answered ${res.statusCode}`))
        .on('error', (e) => resolve(`cut: ${e.message}`))
        .end();
    });
    await new Promise((r) => setTimeout(r, 50)); // the request has arrived and waits on the check
    await server.close();
    // The check would answer after 5 s: "cut" means close() did not wait for it.
    expect(await inFlight).toMatch(/^cut: /);
  });

  it('fails to start on a port in use', async () => {
    const { server } = await start();
    await expect(startOpsServer({ host: '127.0.0.1', port: server.port, registry: createMetrics().registry, ready: () => true })).rejects.toThrow(/EADDRINUSE/);
  });
});
