/**
 * Latency of the kube store on the test API server: `node bin/run-ts.js src/store/kube/testing/latency.ts`.
 * Start-up stages, sequential CRUD round trips (p50/p99), watch delivery (write sent → event handled), and
 * creates with 64 in flight. Loopback, one etcd on tmpfs: a floor for what a real cluster costs.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { startKubeApiServer } from './kubeApiServer.ts';
import type { ExecutionRequest } from '../../src/api/v1alpha1/index.ts';
import { executionRequest } from '../../src/store/embedded/testing/fixtures.ts';
import { createKubeStore } from '../../src/store/kube/index.ts';

const N = 300;
const t0 = performance.now();
const kube = await startKubeApiServer();
console.log(`start-up ${Math.round(performance.now() - t0)} ms: ${JSON.stringify(kube.timings)}`);
try {
  const namespace = 'bench';
  await kube.kubeConfig().makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
  const store = createKubeStore({ kubeConfig: kube.kubeConfig(), namespace });
  const er = (name: string) => ({ ...executionRequest(name), metadata: { name, namespace } });

  const measure = async (label: string, op: (i: number) => Promise<unknown>) => {
    for (let i = 0; i < 20; i++) await op(-1 - i); // warm-up
    const ms: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      await op(i);
      ms.push(performance.now() - t);
    }
    console.log(`${label.padEnd(26)} ${stats(ms)}`);
  };

  await measure('create', (i) => store.create(er(`c${i}`)));
  await measure('get', () => store.get('ExecutionRequest', 'c0'));
  let current: ExecutionRequest = await store.get('ExecutionRequest', 'c0');
  await measure('updateStatus', async (i) => {
    current = await store.updateStatus({ ...current, status: { phase: 'Queued', submitAttempts: i + 100 } });
  });
  await measure('update (spec)', async (i) => {
    current = await store.update({ ...current, metadata: { ...current.metadata, annotations: { i: String(i) } } });
  });
  await measure(`list (${N + 20} objects)`, () => store.list('ExecutionRequest'));
  await measure('delete', (i) => store.delete('ExecutionRequest', `c${i}`));

  // Watch delivery: the time from sending a write to its event reaching the handler.
  const { resourceVersion } = await store.list('ExecutionRequest');
  let sentAt = 0;
  let waiting: ((ms: number) => void) | undefined;
  const w = store.watch('ExecutionRequest', { resourceVersion }, () => waiting?.(performance.now() - sentAt));
  const target = await store.create(er('watched'));
  await new Promise((r) => setTimeout(r, 200));
  let obj = await store.get('ExecutionRequest', target.metadata.name);
  const delivery: number[] = [];
  for (let i = 0; i < N; i++) {
    const seen = new Promise<number>((resolve) => (waiting = resolve));
    sentAt = performance.now();
    obj = await store.updateStatus({ ...obj, status: { phase: 'Queued', submitAttempts: i } });
    delivery.push(await seen);
  }
  w.stop();
  console.log(`${'watch: write sent → event'.padEnd(26)} ${stats(delivery)}`);

  const total = 2_000;
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      for (let i = next++; i < total; i = next++) await store.create(er(`p${i}`));
    }),
  );
  console.log(`creates, 64 in flight       ${Math.round(total / ((performance.now() - t) / 1000))}/s`);
  await store.close();
} finally {
  await kube.stop();
}

function stats(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(2);
  return `p50 ${q(0.5)} ms  p99 ${q(0.99)} ms  (n=${s.length})`;
}
