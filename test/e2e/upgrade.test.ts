/**
 * Upgrades with requests in flight (issue 17 §6), embedded layout: the build of UPGRADE_FROM (a real earlier commit,
 * checked out at test time) runs the service on a data directory against the run's devnet and leaves requests in
 * flight there (test/support/upgradeScenario.ts); it is killed with SIGKILL, and the current code starts on the same
 * data directory and service secret: its store replays the old build's log, and every request finishes.
 */
import { afterAll, describe, it } from 'vitest';
import { callAdminSocket } from '../../src/admin/socket.ts';
import { killHard, spawnServiceChild } from '../support/child.ts';
import { newServiceSecret, tempDir, testDevnet } from '../support/env.ts';
import { checkOutBuild, UPGRADE_FROM, type OldBuild } from '../support/oldBuild.ts';
import { runUpgradeScenario, setHeldChainAutomine } from '../support/upgradeScenario.ts';

describe(`an upgrade from ${UPGRADE_FROM.slice(0, 7)} with requests in flight (embedded)`, () => {
  const devnet = testDevnet();
  let old: OldBuild | undefined;
  const children: Awaited<ReturnType<typeof spawnServiceChild>>[] = [];
  afterAll(async () => {
    for (const c of children) await killHard(c.child);
    await setHeldChainAutomine(devnet, true);
    old?.remove();
  });

  it("finishes the old build's requests under the new code: held ones confirm once, a 402 is paid", async () => {
    old = await checkOutBuild(UPGRADE_FROM);
    const dataDir = tempDir('aw-upgrade-');
    const secret = newServiceSecret();
    const first = await spawnServiceChild(dataDir, secret, {}, old.root);
    children.push(first);
    await runUpgradeScenario(devnet, {
      oldUrl: first.url,
      // The old build's admin socket makes the keys, as `agent-wallet keys create` would.
      newKey: async (mode) =>
        ((await callAdminSocket(dataDir, 'POST', '/keys', { mode, requestsPerSecond: 10_000, burst: 10_000 })) as { api_key: string }).api_key,
      async upgrade() {
        await killHard(first.child); // no final snapshot: the new code replays the old build's log
        const second = await spawnServiceChild(dataDir, secret);
        children.push(second);
        return second.url;
      },
    });
  }, 120_000);
});
