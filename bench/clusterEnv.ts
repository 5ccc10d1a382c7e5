/**
 * The cluster layout for a benchmark, on its own: a devnet in a temp dir, a real kube-apiserver and Redis, and
 * every role as a process (test/support/cluster.ts); `run` gets them, and everything is stopped after.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevnet } from '../src/devnet/devnet.ts';
import { MANIFEST_ENV } from '../test/globalSetup.ts';
import { KUBECONFIG_ENV, REDIS_URL_ENV, startTestCluster, type StartClusterOptions, type TestCluster } from '../test/support/cluster.ts';
import type { DevnetManifest } from '../src/devnet/manifest.ts';
import { startKubeApiServer, type KubeApiServer } from '../test/support/kubeApiServer.ts';
import { startRedis } from '../test/support/redis.ts';

export async function withBenchCluster(
  name: string,
  run: (env: { cluster: TestCluster; api: KubeApiServer; startMs: number; manifest: DevnetManifest }) => Promise<void>,
  opts: StartClusterOptions = {},
): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), `aw-bench-${name}-`));
  const devnet = await startDevnet({ dataDir, log: () => undefined });
  const [api, redis] = await Promise.all([startKubeApiServer(), startRedis({ appendonly: true })]);
  process.env[MANIFEST_ENV] = devnet.manifestPath;
  process.env[KUBECONFIG_ENV] = api.kubeconfigPath;
  process.env[REDIS_URL_ENV] = redis.url;
  const t0 = performance.now();
  const cluster = await startTestCluster(opts);
  try {
    await run({ cluster, api, startMs: performance.now() - t0, manifest: devnet.manifest });
  } finally {
    await cluster.stop();
    await Promise.all([api.stop(), redis.stop()]);
    await devnet.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
