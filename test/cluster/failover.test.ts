/**
 * The cluster layout under failure: the leading controller killed mid-run, a chain worker killed mid-run.
 * "Exactly once" is read off the chain: the Counter moves by exactly the sum the accepted requests asked for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { counterAbi } from '../../src/devnet/contracts.ts';
import type { ChainName } from '../../src/config/chains.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import type { TestApi } from '../support/http.ts';
import { until as untilDone } from '../support/until.ts';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.stop();
});

/** Failover is expected within 30 s. */
const until = <T>(what: string, fn: () => Promise<T | undefined>) => untilDone(what, fn, 30_000);

const readCounter = (chain: ChainName) =>
  cluster.devnet
    .publicClient(chain)
    .readContract({ address: cluster.devnet.chain(chain).testContracts.counter, abi: counterAbi, functionName: 'number' });

/** Sends `n` incrementBy(i+1) executes from `agents` agents, `gapMs` apart; resolves with the request ids. */
async function sendLoad(api: TestApi, chain: ChainName, n: number, agents: number, gapMs: number, onHalf?: () => Promise<void>) {
  const ids: Promise<string>[] = [];
  for (let i = 0; i < n; i++) {
    if (i === Math.floor(n / 2)) await onHalf?.();
    ids.push(
      api
        .post('/execute', {
          agent_id: `load-${i % agents}`,
          chain,
          target_contract: cluster.devnet.chain(chain).testContracts.counter,
          calldata: encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [BigInt(i + 1)] }),
          value: '0',
        })
        .then((r) => {
          expect(r.status, JSON.stringify(r.body)).toBe(200);
          return r.body.request_id as string;
        }),
    );
    await new Promise((r) => setTimeout(r, gapMs));
  }
  return Promise.all(ids);
}

describe('controller leader election', () => {
  it('one replica leads; killing it mid-run hands over, and every request confirms exactly once', async () => {
    const { api } = await cluster.newKey();
    const first = await until('a leader', () => cluster.leader());
    expect(cluster.controllers.map((c) => c.name)).toContain(first);
    const before = await readCounter('base');

    const n = 24;
    const ids = await sendLoad(api, 'base', n, 6, 40, async () => {
      const leader = cluster.controllers.find((c) => c.name === first)!;
      leader.child.kill('SIGKILL'); // no graceful release: the follower must wait the lease out
      await leader.exited;
    });
    const statuses = await Promise.all(ids.map((id) => api.waitForTerminal(id, 60_000)));
    expect(statuses.map((s) => s.status)).toEqual(statuses.map(() => 'confirmed'));
    expect((await readCounter('base')) - before).toBe(BigInt((n * (n + 1)) / 2));

    const second = await until('the other replica to lead', async () => {
      const l = await cluster.leader();
      return l !== undefined && l !== first ? l : undefined;
    });
    expect(second).not.toBe(first);
    // A request's status reached its terminal phase once: the Succeeded condition never flipped.
    for (const id of ids) {
      const r = await cluster.store.get('ExecutionRequest', id);
      expect(r.status?.phase).toBe('Confirmed');
      expect(r.status?.conditions?.find((c) => c.type === 'Succeeded')?.status).toBe('True');
    }
  });

  it('a graceful stop of the leader, with requests in flight, releases the lease at once and loses nothing', async () => {
    const restarted = await cluster.startController(9); // a replacement, as the Deployment would start
    const leaderName = await until('a leader', () => cluster.leader());
    const leader = cluster.processes.find((p) => p.name === leaderName)!;
    const { api } = await cluster.newKey();
    const before = await readCounter('ethereum');
    let afterExit: { holder: string; transitions: number } | undefined;
    const ids = await sendLoad(api, 'ethereum', 12, 3, 20, async () => {
      leader.child.kill('SIGTERM'); // as a rollout or a drain would
      await leader.exited;
      afterExit = await cluster.lease();
    });
    expect(leader.child.exitCode).toBe(0);
    // Released, not left to expire: the moment the old leader has exited, the Lease no longer names it (it wrote
    // an empty holder on its way out, or the other replica has already taken it). Had it merely stopped renewing,
    // the Lease would still name it for the whole lease duration. Read from the Lease, not timed on a clock.
    const next = await until('a new leader', async () => {
      const l = await cluster.leader();
      return l !== undefined && l !== leaderName ? l : undefined;
    });
    expect(afterExit!.holder).not.toBe(leaderName);
    expect(next).toBe(restarted.name);
    const statuses = await Promise.all(ids.map((id) => api.waitForTerminal(id, 30_000)));
    expect(statuses.map((s) => s.status)).toEqual(statuses.map(() => 'confirmed'));
    expect((await readCounter('ethereum')) - before).toBe(BigInt((12 * 13) / 2));
  });
});

describe('chain worker restart', () => {
  it('a chain worker killed with operations in flight comes back; they and later requests confirm exactly once', async () => {
    const { api } = await cluster.newKey();
    const before = await readCounter('arbitrum');
    // Accepted means signed and persisted (Queued): these are in the worker's bundler, or on their way, when it dies.
    const inFlight = await sendLoad(api, 'arbitrum', 10, 5, 0);
    await cluster.restartWorker('arbitrum', 'SIGKILL');
    const later = await sendLoad(api, 'arbitrum', 10, 5, 10);
    const ids = [...inFlight, ...later];
    const statuses = await Promise.all(ids.map((id) => api.waitForTerminal(id, 40_000))).catch(async (e: unknown) => {
      const { items } = await cluster.store.list('ExecutionRequest', { namespace: cluster.namespace });
      const view = items.map((r) => `${r.metadata.name} ${r.status?.phase} nonce=${r.status?.userOperation?.nonce} attempts=${r.status?.submitAttempts}`);
      throw new Error(`${(e as Error).message}\n${view.join('\n')}`);
    });
    expect(statuses.map((s) => s.status)).toEqual(statuses.map(() => 'confirmed'));
    // incrementBy(1..10) twice: each operation executed once, none twice, none lost.
    expect((await readCounter('arbitrum')) - before).toBe(2n * 55n);
  });
});
