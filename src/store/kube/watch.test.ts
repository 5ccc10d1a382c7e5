/**
 * What the kube store does beyond the conformance suite, on a real API server: watches across server
 * timeouts, bookmarks, half-open connections (the JavaScript client's known hang), an API server restart,
 * and the errors of a misconfigured cluster.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { tokenKubeconfig } from '../../../test/support/kubeApiServer.ts';
import type { ApiClient } from '../../api/v1alpha1/index.ts';
import { Informer } from '../../runtime/informer.ts';
import { quiet } from '../../runtime/testing/support.ts';
import { codeOf } from '../conformance.ts';
import { apiClient } from '../embedded/testing/fixtures.ts';
import type { ResourceStore, WatchEvent } from '../types.ts';
import { createKubeStore, type KubeStore, type KubeStoreOptions } from './index.ts';
import { useKubeApiServer } from '../../../test/support/kubeStoreEnv.ts';
import { startFreezableProxy, type FreezableProxy } from './testing/freezableProxy.ts';
import type { KubeWatch } from './watch.ts';

const env = useKubeApiServer();
const freshNamespace = () => env.freshNamespace('watch');

function store(namespace: string, opts: Partial<KubeStoreOptions> = {}, kubeConfig = env.kube.kubeConfig()): KubeStore {
  const s = createKubeStore({ kubeConfig, namespace, logger: quiet, ...opts });
  env.cleanup(() => s.close());
  return s;
}

/** A kubeconfig that reaches the API server through a proxy whose connections the test can freeze. */
async function viaProxy(): Promise<{ kubeConfig: KubeConfig; proxy: FreezableProxy }> {
  const port = Number(new URL(env.kube.server).port);
  const proxy = await startFreezableProxy({ host: '127.0.0.1', port });
  env.cleanup(() => proxy.close());
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(tokenKubeconfig(`https://127.0.0.1:${proxy.port}`, env.kube.caPem, 'admin', env.kube.token));
  return { kubeConfig, proxy };
}

const client = (name: string, namespace: string): ApiClient => apiClient(name, { namespace });

/** An ApiClient informer on `s`, started and synced, with short backoffs; stopped after the test. */
async function syncedInformer(s: ResourceStore, ns: string): Promise<Informer<'ApiClient'>> {
  const informer = new Informer({ store: s, kind: 'ApiClient', namespace: ns, backoffMs: [100, 1_000], logger: quiet });
  env.cleanup(() => informer.stop());
  informer.start();
  await informer.waitForSync();
  return informer;
}

function collect<T>() {
  const events: WatchEvent<T>[] = [];
  return { events, onEvent: (e: WatchEvent<T>) => void events.push(e) };
}

async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('kube watch', () => {
  it('spans server-side timeouts: reconnects from the last version, no event lost or repeated', async () => {
    const ns = await freshNamespace();
    const s = store(ns, { watch: { serverTimeoutSeconds: 1, inactivityMs: 5_000 } });
    const { resourceVersion } = await s.list('ApiClient');
    const c = collect<ApiClient>();
    const w = s.watch('ApiClient', { resourceVersion }, c.onEvent) as KubeWatch<'ApiClient'>;
    const written: string[] = [];
    const until = Date.now() + 3_500;
    for (let i = 0; Date.now() < until; i++) {
      written.push(`ADDED o${i}@${(await s.create(client(`o${i}`, ns))).metadata.resourceVersion}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await eventually('every event', () => c.events.length >= written.length);
    await new Promise((r) => setTimeout(r, 200));
    expect(c.events.map((e) => `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`)).toEqual(written);
    expect(w.requests).toBeGreaterThanOrEqual(3);
    let settled = false;
    const mark = () => void (settled = true);
    void w.done.then(mark, mark);
    await new Promise((r) => setTimeout(r, 10));
    expect(settled).toBe(false);
  });

  it('takes bookmarks as progress: a quiet watch moves past other namespaces\' writes, delivering nothing', async () => {
    const ns = await freshNamespace();
    const busy = await freshNamespace();
    // The server sends a bookmark 2 s before it ends a watch request.
    const s = store(ns, { watch: { serverTimeoutSeconds: 4, inactivityMs: 10_000 } });
    const { resourceVersion } = await s.list('ApiClient');
    const c = collect<ApiClient>();
    const w = s.watch('ApiClient', { resourceVersion }, c.onEvent) as KubeWatch<'ApiClient'>;
    let last = '';
    for (let i = 0; i < 5; i++) last = (await s.create(client(`b${i}`, busy))).metadata.resourceVersion!;
    await eventually('a bookmark at or past the last write', () => BigInt(w.resourceVersion) >= BigInt(last), 10_000);
    expect(c.events).toEqual([]);
    expect(w.resourceVersion).not.toBe(resourceVersion);
  });

  it('treats a silent connection as dead: Unavailable after the inactivity timeout', async () => {
    const ns = await freshNamespace();
    const { kubeConfig, proxy } = await viaProxy();
    const direct = store(ns);
    const s = store(ns, { watch: { serverTimeoutSeconds: 60, inactivityMs: 1_500 } }, kubeConfig);
    const { resourceVersion } = await s.list('ApiClient');
    const c = collect<ApiClient>();
    const w = s.watch('ApiClient', { resourceVersion }, c.onEvent);
    await direct.create(client('before', ns));
    await eventually('the event before the freeze', () => c.events.length === 1);

    expect(proxy.freeze()).toBeGreaterThan(0);
    const frozenAt = performance.now();
    await direct.create(client('after', ns));
    const err = await w.done.then(
      () => undefined,
      (e: unknown) => e,
    );
    const silentMs = performance.now() - frozenAt;
    expect(err).toMatchObject({ code: 'Unavailable' });
    expect((err as Error).message).toContain('no data for 1500 ms');
    expect(silentMs).toBeGreaterThan(1_000); // waited out the inactivity timeout (a lower bound holds under load)
    expect(c.events).toHaveLength(1);
  });

  it('an informer on it recovers from a frozen connection and sees what changed meanwhile', async () => {
    const ns = await freshNamespace();
    const { kubeConfig, proxy } = await viaProxy();
    const direct = store(ns);
    const s = store(ns, { requestTimeoutMs: 2_000, watch: { serverTimeoutSeconds: 60, inactivityMs: 1_500 } }, kubeConfig);
    const informer = await syncedInformer(s, ns);
    await direct.create(client('a', ns));
    await eventually('a in the cache', () => informer.get('a', ns) !== undefined);

    proxy.freeze();
    const t = performance.now();
    await direct.create(client('b', ns));
    await eventually('b in the cache', () => informer.get('b', ns) !== undefined, 20_000);
    const recoveredMs = performance.now() - t;
    expect(informer.counters.watchErrors).toBeGreaterThanOrEqual(1);
    expect(recoveredMs).toBeGreaterThan(1_000);
    console.log(`informer recovered from a frozen connection in ${Math.round(recoveredMs)} ms`);
  });

  it('an informer survives an API server restart (the watch cache restarts: Gone, then a relist)', async () => {
    const ns = await freshNamespace();
    const s = store(ns, { requestTimeoutMs: 2_000 });
    const informer = await syncedInformer(s, ns);
    await s.create(client('a', ns));
    await eventually('a in the cache', () => informer.get('a', ns) !== undefined);

    await env.kube.killApiServer();
    const t = performance.now();
    await env.kube.startApiServer();
    const restartMs = performance.now() - t;
    await s.create(client('b', ns));
    await s.delete('ApiClient', 'a', { namespace: ns });
    await eventually('b in and a out of the cache', () => informer.get('b', ns) !== undefined && informer.get('a', ns) === undefined, 20_000);
    expect(informer.counters.watchErrors + informer.counters.gone).toBeGreaterThanOrEqual(1);
    console.log(
      `API server restarted in ${Math.round(restartMs)} ms; informer: ${JSON.stringify(informer.counters)}`,
    );
  });
});

describe('kube store errors', () => {
  it('create in a namespace that does not exist: NotFound', async () => {
    const s = store('default');
    expect(await codeOf(s.create(client('a', 'no-such-namespace')))).toBe('NotFound');
  });

  it('a request past its deadline: Unavailable, as is a refused connection', async () => {
    const ns = await freshNamespace();
    const { kubeConfig, proxy } = await viaProxy();
    const s = store(ns, { requestTimeoutMs: 500 }, kubeConfig);
    await s.list('ApiClient');
    proxy.freeze();
    // Without its deadline the request would hang on the frozen connection until the test's own timeout.
    const err = await s.get('ApiClient', 'a').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'Unavailable' });
    expect((err as Error).message).toContain('request timed out');
    await proxy.close();
    const refused = await s.get('ApiClient', 'a').catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'Unavailable' });
    expect((refused as Error).message).toContain('ECONNREFUSED');
  });

  it('RBAC denial: Unavailable (retryable once the Role is fixed), naming the verb', async () => {
    const ns = await freshNamespace();
    const kubeconfigPath = await env.kube.serviceAccountKubeconfig(ns, 'nobody');
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    const s = store(ns, {}, kc);
    const err = await s.list('ApiClient').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'Unavailable' });
    expect((err as Error).message).toMatch(/forbidden/);
  });

  it('lists page through large collections with one resourceVersion', async () => {
    const ns = await freshNamespace();
    const s = store(ns, { listPageSize: 2 });
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await s.create(client(`p${i}`, ns)));
    const { items, resourceVersion } = await s.list('ApiClient');
    expect(items.map((o) => o.metadata.name).sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
    expect(BigInt(resourceVersion)).toBeGreaterThanOrEqual(BigInt(created.at(-1)!.metadata.resourceVersion!));
  });

  // Last: it removes a CRD from the shared server.
  it('a kind whose CRD is not installed: Unavailable, never NotFound (a reconciler would drop the object)', async () => {
    const ns = await freshNamespace();
    const s: ResourceStore = store(ns);
    const del = await env.kube.kubectl(['delete', 'crd', 'paymentreceipts.agentwallet.dev', '--wait=true']);
    expect(del.code).toBe(0);
    await eventually('the API to go', async () => (await codeOf(s.get('PaymentReceipt', 'x'))) !== 'NotFound');
    const err = await s.get('PaymentReceipt', 'x').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'Unavailable' });
    expect((err as Error).message).toContain('CRD');
  });
});
