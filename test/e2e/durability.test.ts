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
