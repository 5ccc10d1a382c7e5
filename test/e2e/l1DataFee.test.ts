/**
 * L2 data fees end to end (docs/architecture.md, "L2 data fees"): on base the simulate answer, the 402 quote, the
 * execute answer and the status show the L1 part of the gas, the operation on chain carries it in its
 * preVerificationGas, and it still reaches confirmed; ethereum shows none.
 */
import { describe, expect, it } from 'vitest';
import { decodeFunctionData, encodeFunctionData, getAddress, hexToBigInt, slice } from 'viem';
import { entryPoint07Abi, type PackedUserOperation } from 'viem/account-abstraction';
import { bundledGasLimits, handleOpsGasLimit, type OperationGasLimits } from '../../src/chain/gas.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { useTestService } from '../support/service.ts';

const increment = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
const service = useTestService();

/** The gas limits packed into a v0.7 operation: accountGasLimits = verification ‖ call, paymasterAndData = paymaster ‖ verification ‖ postOp ‖ data. */
const limitsOf = (o: PackedUserOperation): OperationGasLimits => ({
  verificationGasLimit: hexToBigInt(slice(o.accountGasLimits, 0, 16)),
  callGasLimit: hexToBigInt(slice(o.accountGasLimits, 16, 32)),
  preVerificationGas: o.preVerificationGas,
  paymasterVerificationGasLimit: hexToBigInt(slice(o.paymasterAndData, 20, 36)),
  paymasterPostOpGasLimit: hexToBigInt(slice(o.paymasterAndData, 36, 52)),
});

const counterCall = (agentId: string, chain: string) => ({
  agent_id: agentId,
  chain,
  target_contract: service().devnet.chain(chain as 'base').testContracts.counter,
  calldata: increment,
  value: '0',
});

describe('L2 data fee in the quote and the operation', () => {
  it('base: simulate and the 402 quote show the L1 part; an execute carries it in preVerificationGas and reaches confirmed', async () => {
    const manual = await service().newKey('manual');
    const sim = await manual.api.post('/simulate', counterCall('l1-quote', 'base'));
    expect(sim.status).toBe(200);
    // A few thousand gas at the devnet's stand-in parameters, inside estimated_gas and so in the USD figure.
    expect(sim.body.l1_data_gas).toBeGreaterThan(1_000);
    expect(sim.body.l1_data_gas).toBeLessThan(sim.body.estimated_gas);
    expect(sim.body.estimated_cost_usd).toBeGreaterThan(0);
    const quote = await manual.api.post('/execute', counterCall('l1-quote', 'base'));
    expect(quote.status).toBe(402);
    expect(quote.body.l1_data_gas).toBeGreaterThan(1_000);

    const { api } = await service().newKey();
    const res = await api.post('/execute', counterCall('l1-exec', 'base'));
    expect(res.status).toBe(200);
    const l1 = res.body.l1_data_gas as number;
    expect(l1).toBeGreaterThan(1_000);
    const status = await api.waitForTerminal(res.body.request_id);
    expect(status.status).toBe('confirmed');
    expect(status.l1_data_gas).toBe(l1);

    // On chain: the bundle's handleOps carries the operation with a preVerificationGas above its L1 part plus the
    // calldata it can never be without (the L1 part was priced when signing, from the same fees).
    const client = service().devnet.publicClient('base');
    const tx = await client.getTransaction({ hash: status.tx_hash });
    const { args } = decodeFunctionData({ abi: entryPoint07Abi, data: tx.input });
    const ops = args[0] as readonly PackedUserOperation[];
    const op = ops.find((o) => getAddress(o.sender) === getAddress(res.body.smart_wallet_address));
    expect(op).toBeDefined();
    expect(op!.preVerificationGas).toBeGreaterThan(BigInt(l1) + 12_000n);
    // The L1 part is not gas the bundle transaction uses (OP-stack deducts the fee apart from gas): the bundle's gas
    // limit counts only each operation's L2 part, less than its whole PVG would give.
    const apart = handleOpsGasLimit(ops.map((o) => bundledGasLimits(limitsOf(o), o, true)));
    expect(tx.gas).toBe(apart);
    // Counting the whole PVG would add the L1 part (less a few hundred gas: the L2 part recomputed from the signed
    // operation's bytes is not exactly the estimate's, made with placeholder signatures).
    expect(handleOpsGasLimit(ops.map(limitsOf)) - apart).toBeGreaterThan(BigInt(l1) - 1_000n);
  });

  it('ethereum: no L1 part anywhere', async () => {
    const { api } = await service().newKey();
    const sim = await api.post('/simulate', counterCall('l1-none', 'ethereum'));
    expect(sim.status).toBe(200);
    expect(sim.body).not.toHaveProperty('l1_data_gas');
    const res = await api.post('/execute', counterCall('l1-none', 'ethereum'));
    expect(res.body).not.toHaveProperty('l1_data_gas');
    const status = await api.waitForTerminal(res.body.request_id);
    expect(status.status).toBe('confirmed');
    expect(status).not.toHaveProperty('l1_data_gas');
  });
});
