/**
 * Upgrades with requests in flight (issue 17 §6), cluster layout: an API server of this file's own starts with the
 * CRDs of UPGRADE_FROM (a real earlier commit, checked out at test time), and that build's roles (chain workers, a
 * controller, the gateway) leave requests in flight as ExecutionRequests stored without the fields added since
 * (test/support/upgradeScenario.ts). Then the upgrade as docs/operations.md has it: the new CRDs applied while the
 * old build runs, every role stopped and started again from the current code; every request finishes. Its own API
 * server, so the old CRDs never reach another file.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { testDevnet } from '../support/env.ts';
import { startKubeApiServer, type KubeApiServer } from '../support/kubeApiServer.ts';
import { checkOutBuild, UPGRADE_FROM, type OldBuild } from '../support/oldBuild.ts';
import { runUpgradeScenario, setHeldChainAutomine } from '../support/upgradeScenario.ts';

describe(`an upgrade from ${UPGRADE_FROM.slice(0, 7)} with requests in flight (cluster)`, () => {
  const devnet = testDevnet();
  let old: OldBuild | undefined;
  let api: KubeApiServer | undefined;
  let cluster: TestCluster | undefined;
  afterAll(async () => {
    await cluster?.stop();
    await api?.stop();
    await setHeldChainAutomine(devnet, true);
    old?.remove();
  });

  it("finishes the old build's requests under the new code and CRDs", async () => {
    old = await checkOutBuild(UPGRADE_FROM);
    api = await startKubeApiServer({ crds: join(old.root, 'crds') });
    const c = (cluster = await startTestCluster({ kubeconfigPath: api.kubeconfigPath, root: old.root, controllers: 1 }));
    await runUpgradeScenario(devnet, {
      oldUrl: c.url,
      newKey: async (mode) => (await c.newKey(mode)).apiKey,
      // Read raw (kubectl), not through the current code's decoding: what the old build stored, as stored.
      async storedPhase(id) {
        const got = await api!.kubectl(['get', 'executionrequests.agentwallet.dev', id, '-n', c.namespace, '-o', 'json']);
        expect(got.code, got.stderr).toBe(0);
        const stored = JSON.parse(got.stdout) as { spec: Record<string, unknown>; status?: { phase?: string } };
        expect(stored.spec).not.toHaveProperty('action'); // a field the old build did not have
        return stored.status?.phase;
      },
      async upgrade() {
        // As docs/operations.md says: the release's CRDs first (the old build still running), then the roles.
        const applied = await api!.kubectl(['apply', '--server-side', '-f', 'crds/']);
        expect(applied.code, applied.stderr).toBe(0);
        const established = await api!.kubectl(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
        expect(established.code, established.stderr).toBe(0);
        await c.restartAll(process.cwd());
        return c.url;
      },
    });
  }, 240_000);
});
