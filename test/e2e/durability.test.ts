import { describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { callAdminSocket } from '../../src/admin/socket.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { killHard, spawnServiceChild } from '../support/child.ts';
import { newServiceSecret, tempDir, testDevnet } from '../support/env.ts';
import { apiClient } from '../support/http.ts';

describe('a kill -9 of the service', () => {
  it('loses no accepted request, and executes each exactly once after restart', async () => {
    const devnet = testDevnet();
    const chain = devnet.chain('arbitrum');
    const client = devnet.publicClient('arbitrum');
    const counter = chain.testContracts.counter;
    const dataDir = tempDir('aw-crash-');
    const secret = newServiceSecret();

    const first = await spawnServiceChild(dataDir, secret);
    const { api_key } = (await callAdminSocket(dataDir, 'POST', '/keys', { mode: 'sponsored', requestsPerSecond: 10_000, burst: 10_000 })) as { api_key: string };
    let api = apiClient(first.url, api_key);
    const before = await client.readContract({ address: counter, abi: counterAbi, functionName: 'number' });

    const n = 16;
    const responses = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        api.post('/execute', {
          agent_id: `crash-agent-${i % 4}`, // four wallets, four requests each: nonces in flight at the kill
          chain: 'arbitrum',
          target_contract: counter,
          calldata: encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [100n] }),
          value: '0',
        }),
      ),
    );
    for (const r of responses) expect(r.status, JSON.stringify(r.body)).toBe(200);
    await killHard(first.child); // right after acceptance: many are queued or broadcasting

    const second = await spawnServiceChild(dataDir, secret);
    try {
      api = apiClient(second.url, api_key);
      const statuses = await Promise.all(responses.map((r) => api.waitForTerminal(r.body.request_id, 60_000)));
      expect(statuses.map((s) => s.status)).toEqual(statuses.map(() => 'confirmed'));
      const after = await client.readContract({ address: counter, abi: counterAbi, functionName: 'number' });
      expect(after - before).toBe(100n * BigInt(n)); // not one lost, not one twice
      const txs = new Set(statuses.map((s) => s.tx_hash));
      expect(txs.size).toBeGreaterThan(0);
    } finally {
      await killHard(second.child);
    }
  });
});

describe('a kill -9 while bundles wait in the mempool', () => {
  it('re-sends the same operations after restart, and the chain executes each once', async () => {
    const devnet = testDevnet();
    const chain = devnet.chain('base');
    const client = devnet.publicClient('base');
    const rpc = (method: string, params: unknown[] = []): Promise<unknown> =>
      client.request({ method: method as any, params: params as any });
    const counter = chain.testContracts.counter;
    const dataDir = tempDir('aw-crash-mempool-');
    const secret = newServiceSecret();

    const first = await spawnServiceChild(dataDir, secret);
    const { api_key } = (await callAdminSocket(dataDir, 'POST', '/keys', {
      mode: 'sponsored',
      requestsPerSecond: 10_000,
      burst: 10_000,
    })) as { api_key: string };
    let api = apiClient(first.url, api_key);
    // Deploy the wallets first, so the held bundles below carry plain operations.
    const warm = await Promise.all(
      [0, 1].map((i) =>
        api.post('/execute', {
          agent_id: `mempool-agent-${i}`,
          chain: 'base',
          target_contract: counter,
          calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
          value: '0',
        }),
      ),
    );
    for (const r of warm) expect((await api.waitForTerminal(r.body.request_id)).status).toBe('confirmed');
    const before = await client.readContract({ address: counter, abi: counterAbi, functionName: 'number' });

    await rpc('evm_setAutomine', [false]);
    let second: Awaited<ReturnType<typeof spawnServiceChild>> | undefined;
    try {
      const responses = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          api.post('/execute', {
            agent_id: `mempool-agent-${i % 2}`,
            chain: 'base',
            target_contract: counter,
            calldata: encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [1000n] }),
            value: '0',
          }),
        ),
      );
      for (const r of responses) expect(r.status, JSON.stringify(r.body)).toBe(200);
      for (let i = 0; ; i++) {
        const pool = (await rpc('txpool_status')) as { pending: string | number };
        if (Number(pool.pending) >= 1) break;
        if (i > 400) throw new Error('no bundle reached the mempool');
        await new Promise((r) => setTimeout(r, 25));
      }
      await killHard(first.child); // its bundles stay in the mempool, unmined

      second = await spawnServiceChild(dataDir, secret);
      api = apiClient(second.url, api_key);
      await new Promise((r) => setTimeout(r, 300)); // let it re-send what it finds in flight
      await rpc('evm_setAutomine', [true]);
      await rpc('evm_mine');

      const statuses = await Promise.all(responses.map((r) => api.waitForTerminal(r.body.request_id, 60_000)));
      expect(statuses.map((s) => s.status)).toEqual(statuses.map(() => 'confirmed'));
      const after = await client.readContract({ address: counter, abi: counterAbi, functionName: 'number' });
      expect(after - before).toBe(6000n); // six operations, each executed exactly once
    } finally {
      await rpc('evm_setAutomine', [true]);
      if (second) await killHard(second.child);
    }
  });
});
