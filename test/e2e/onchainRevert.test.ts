import { describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { gateAbi } from '../../src/devnet/contracts.ts';
import { useTestService } from '../support/service.ts';

const service = useTestService();

describe('state changes between simulation and inclusion', () => {
  it('reports reverted, with the reason, when the call reverts on chain', async () => {
    const { api } = await service().newKey();
    const chain = service().devnet.chain('base');
    const client = service().devnet.publicClient('base');
    const other = service().devnet.walletClient('base', 1);
    const gate = chain.testContracts.gate;
    const rpc = (method: string, params: unknown[] = []): Promise<unknown> => client.request({ method: method as any, params: params as any });

    await client.waitForTransactionReceipt({
      hash: await other.writeContract({ address: gate, abi: gateAbi, functionName: 'setOpen', args: [true] }),
    });
    // Hold blocks: the bundle waits in the mempool while someone closes the gate ahead of it.
    await rpc('evm_setAutomine', [false]);
    try {
      const res = await api.post('/execute', {
        agent_id: 'gatecrasher',
        chain: 'base',
        target_contract: gate,
        calldata: encodeFunctionData({ abi: gateAbi, functionName: 'pass' }),
        value: '0',
      });
      expect(res.status).toBe(200); // the simulation saw an open gate
      for (let i = 0; ; i++) {
        const pool = (await rpc('txpool_status')) as { pending: string | number };
        if (Number(pool.pending) >= 1) break;
        if (i > 400) throw new Error('the bundle never reached the mempool');
        await new Promise((r) => setTimeout(r, 25));
      }
      await other.writeContract({
        address: gate,
        abi: gateAbi,
        functionName: 'setOpen',
        args: [false],
        maxPriorityFeePerGas: 500_000_000_000n, // ahead of the bundle in the block
        maxFeePerGas: 1_000_000_000_000n,
      });
      await rpc('evm_mine');
      const status = await api.waitForTerminal(res.body.request_id);
      expect(status.status).toBe('reverted');
      expect(status.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(JSON.stringify(status)).toContain('Gate: closed');
    } finally {
      await rpc('evm_setAutomine', [true]);
    }
  });
});
