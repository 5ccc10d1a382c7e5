import { describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { ANNOTATIONS } from '../../src/api/v1alpha1/index.ts';
import { useTestService } from '../support/service.ts';

const service = useTestService();

describe('concurrent executes from one agent', () => {
  it('all confirm, with nonces in the order the gateway accepted them', async () => {
    const { api } = await service().newKey();
    const eth = service().devnet.chain('ethereum');
    const client = service().devnet.publicClient('ethereum');
    const before = await client.readContract({ address: eth.testContracts.counter, abi: counterAbi, functionName: 'number' });
    const n = 12;
    const responses = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        api.post('/execute', {
          agent_id: 'busy-agent',
          chain: 'ethereum',
          target_contract: eth.testContracts.counter,
          calldata: encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [BigInt(i + 1)] }),
          value: '0',
        }),
      ),
    );
    for (const r of responses) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const statuses = await Promise.all(responses.map((r) => api.waitForTerminal(r.body.request_id)));
    for (const s of statuses) expect(s.status).toBe('confirmed');

    const after = await client.readContract({ address: eth.testContracts.counter, abi: counterAbi, functionName: 'number' });
    expect(after - before).toBe(BigInt((n * (n + 1)) / 2)); // each executed exactly once

    const records = await Promise.all(responses.map((r) => service().store.get('ExecutionRequest', r.body.request_id)));
    records.sort((a, b) => a.metadata.annotations![ANNOTATIONS.accepted]!.localeCompare(b.metadata.annotations![ANNOTATIONS.accepted]!));
    const nonces = records.map((r) => BigInt(r.status!.userOperation!.nonce));
    expect(nonces).toEqual(nonces.map((_, i) => BigInt(i))); // first op deploys (nonce 0), then 1, 2, ...
  });
});

describe('many agents at once', () => {
  it('confirms every execution of 30 agents over three chains', async () => {
    const { api } = await service().newKey();
    const chains = ['ethereum', 'base', 'arbitrum'] as const;
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        const chain = chains[i % 3]!;
        return api.post('/execute', {
          agent_id: `fleet-${i}`,
          chain,
          target_contract: service().devnet.chain(chain).testContracts.counter,
          calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
          value: '0',
        });
      }),
    );
    for (const r of responses) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const statuses = await Promise.all(responses.map((r) => api.waitForTerminal(r.body.request_id)));
    expect(statuses.map((s) => s.status)).toEqual(statuses.map(() => 'confirmed'));
  });
});
