/**
 * Redis crashes mid-run (kill -9) and comes back on its append-only file: nonce and executor locks are soft
 * state and the EntryPoint nonce fences the work, so every accepted request still confirms exactly once, and
 * a request accepted during the outage waits or is refused with a retryable error, never executed twice.
 * Its own Redis, so killing it disturbs no other file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { startRedis, type TestRedis } from '../support/redis.ts';

let redis: TestRedis;
let cluster: TestCluster;
beforeAll(async () => {
  redis = await startRedis({ appendonly: true });
  cluster = await startTestCluster({ redisUrl: redis.url });
});
afterAll(async () => {
  await cluster?.stop();
  await redis?.stop();
});

describe('Redis restart', () => {
  it('requests accepted around a Redis crash all reach one terminal state; the accepted ones confirm once', async () => {
    const { api } = await cluster.newKey();
    const counter = cluster.devnet.chain('ethereum').testContracts.counter;
    const read = () => cluster.devnet.publicClient('ethereum').readContract({ address: counter, abi: counterAbi, functionName: 'number' });
    const body = (i: number) => ({
      agent_id: `redis-${i % 3}`,
      chain: 'ethereum',
      target_contract: counter,
      calldata: encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [BigInt(i + 1)] }),
      value: '0',
    });
    const before = await read();
    const first = await Promise.all(Array.from({ length: 9 }, (_, i) => api.post('/execute', body(i))));
    for (const r of first) expect(r.status, JSON.stringify(r.body)).toBe(200);

    redis.kill();
    // Sent while Redis is down: signing needs the nonce lock, so each is queued late or refused (503).
    const during = api.post('/execute', body(9));
    await new Promise((r) => setTimeout(r, 1_500));
    const back = await startRedis({ appendonly: true, dir: redis.dir, port: redis.port });
    try {
      const duringRes = await during;
      expect([200, 503], JSON.stringify(duringRes.body)).toContain(duringRes.status);
      const accepted = [...first, ...(duringRes.status === 200 ? [duringRes] : [])];
      const statuses = await Promise.all(accepted.map((r) => api.waitForTerminal(r.body.request_id, 60_000)));
      expect(statuses.map((s) => s.status)).toEqual(statuses.map(() => 'confirmed'));
      const expected = accepted.reduce((sum, _r, i) => sum + BigInt(i + 1), 0n);
      expect((await read()) - before).toBe(expected);
    } finally {
      redis = back;
    }
  });
});
