/**
 * The kube store's health() follows the outcome of its last request. Needs no API server: an unreachable
 * address is the failure, and a plain HTTP server answering one Status is "the API server answered" (the
 * conformance suite checks the healthy case on a real one).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { quiet } from '../../runtime/testing/support.ts';
import { codeOf } from '../conformance.ts';
import { createKubeStore } from './index.ts';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

function kubeConfigFor(port: number): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u', namespace: 'default' }],
    currentContext: 'x',
  });
  return kc;
}

/** A port nothing listens on (yet). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

describe('kube store health', () => {
  it('is not writable while requests fail with Unavailable, keeps when that began, and is writable once the server answers', async () => {
    const port = await freePort();
    const store = createKubeStore({ kubeConfig: kubeConfigFor(port), namespace: 'default', logger: quiet, requestTimeoutMs: 2_000 });
    expect(store.health()).toEqual({ writable: true });
    expect(await codeOf(store.get('ApiClient', 'a'))).toBe('Unavailable');
    const down = store.health();
    expect(down).toMatchObject({ writable: false, recovering: true, reason: expect.stringMatching(/ECONNREFUSED/) });
    expect(await codeOf(store.get('ApiClient', 'a'))).toBe('Unavailable');
    expect(store.health()).toMatchObject({ since: (down as { since: string }).since });

    // The API server is back; it answers NotFound, which is an answer: writes can go through.
    server = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404, details: { name: 'a' } }));
    });
    await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
    expect(await codeOf(store.get('ApiClient', 'a'))).toBe('NotFound');
    expect(store.health()).toEqual({ writable: true });

    await store.close();
    expect(store.health()).toMatchObject({ writable: false, recovering: false });
  });
});
