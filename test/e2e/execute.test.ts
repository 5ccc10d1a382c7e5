import { describe, expect, it } from 'vitest';
import { encodeFunctionData, getAddress, parseEventLogs } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { deriveOwnerAccount, walletSalt } from '../../src/chain/index.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { referenceWalletAddresses } from '../../src/devnet/testing/walletAddresses.ts';
import { useTestService } from '../support/service.ts';

const increment = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
const incrementBy = (n: bigint) => encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [n] });
const fail = encodeFunctionData({ abi: counterAbi, functionName: 'fail' });

/** A single-call body against the devnet Counter of `chain` (payload chain name as sent, aliases allowed). */
const counterCall = (agentId: string, chain: string, counter: string, calldata: string = increment) => ({
  agent_id: agentId,
  chain,
  target_contract: counter,
  calldata,
  value: '0',
});

const service = useTestService();

describe('execute → confirmed on the devnet', () => {
  it('runs a single call through to confirmed, with its effect on chain', async () => {
    const { api } = await service().newKey();
    const eth = service().devnet.chain('ethereum');
    const client = service().devnet.publicClient('ethereum');
    const before = await client.readContract({ address: eth.testContracts.counter, abi: counterAbi, functionName: 'number' });

    const wallet = await api.get('/wallet?agent_id=agent-single&chain=ethereum');
    expect(wallet.status).toBe(200);
    expect(wallet.body.deployed).toBe(false);

    const res = await api.post('/execute', counterCall('agent-single', 'ethereum', eth.testContracts.counter));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'queued', tx_hash: null, smart_wallet_address: wallet.body.smart_wallet_address });
    expect(Number.isInteger(res.body.estimated_gas)).toBe(true);
    expect(res.body.estimated_cost_usd).toBe(0); // sponsored key

    const status = await api.waitForTerminal(res.body.request_id);
    expect(status).toMatchObject({ request_id: res.body.request_id, status: 'confirmed', chain: 'ethereum', cost_usd: 0 });
    expect(status.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(Date.parse(status.updated_at)).toBeGreaterThanOrEqual(Date.parse(status.created_at));

    const after = await client.readContract({ address: eth.testContracts.counter, abi: counterAbi, functionName: 'number' });
    expect(after).toBe(before + 1n);
    const lastCaller = await client.readContract({ address: eth.testContracts.counter, abi: counterAbi, functionName: 'lastCaller' });
    expect(getAddress(lastCaller)).toBe(getAddress(wallet.body.smart_wallet_address));

    // The receipt holds a successful UserOperationEvent of this wallet.
    const receipt = await client.getTransactionReceipt({ hash: status.tx_hash });
    const events = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
    const mine = events.find((e) => getAddress(e.args.sender) === getAddress(wallet.body.smart_wallet_address));
    expect(mine?.args.success).toBe(true);

    const deployed = await api.get('/wallet?agent_id=agent-single&chain=ethereum');
    expect(deployed.body.deployed).toBe(true);
    expect(deployed.body.smart_wallet_address).toBe(wallet.body.smart_wallet_address);
  });

  it('runs a batch in one operation, calls in order', async () => {
    const { api } = await service().newKey();
    const base = service().devnet.chain('base');
    const client = service().devnet.publicClient('base');
    const before = await client.readContract({ address: base.testContracts.counter, abi: counterAbi, functionName: 'number' });
    const res = await api.post('/execute', {
      agent_id: 'agent-batch',
      chain: 'base',
      batch_calls: [
        { target_contract: base.testContracts.counter, value: '0', calldata: incrementBy(5n) },
        { target_contract: base.testContracts.counter, value: '0', calldata: increment },
      ],
    });
    expect(res.status).toBe(200);
    const status = await api.waitForTerminal(res.body.request_id);
    expect(status.status).toBe('confirmed');
    const after = await client.readContract({ address: base.testContracts.counter, abi: counterAbi, functionName: 'number' });
    expect(after).toBe(before + 6n);
  });

  it('accepts the chain aliases eth and arb', async () => {
    const { api } = await service().newKey();
    const arb = service().devnet.chain('arbitrum');
    const res = await api.post('/execute', counterCall('agent-alias', 'arb', arb.testContracts.counter));
    expect(res.status).toBe(200);
    const status = await api.waitForTerminal(res.body.request_id);
    expect(status).toMatchObject({ status: 'confirmed', chain: 'arbitrum' });
  });

  it('refuses a call that fails simulation with its revert reason, and queues nothing', async () => {
    const { api, clientId } = await service().newKey();
    const eth = service().devnet.chain('ethereum');
    const sim = await api.post('/simulate', counterCall('agent-fail', 'ethereum', eth.testContracts.counter, fail));
    expect(sim.status).toBe(400);
    expect(sim.body.error).toBe('simulation_failed');
    expect(JSON.stringify(sim.body)).toContain('Counter: forced failure');

    const res = await api.post('/execute', counterCall('agent-fail', 'ethereum', eth.testContracts.counter, fail));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('simulation_failed');
    expect(JSON.stringify(res.body)).toContain('Counter: forced failure');
    const id = res.body.request_id as string;
    const status = await api.get(`/status/${id}`);
    expect(status.body.status).toBe('failed');
    // Nothing was signed or sent: no UserOperation in the record, the wallet's EntryPoint nonce is untouched.
    const record = await service().store.get('ExecutionRequest', id);
    expect(record.status?.userOperation).toBeUndefined();
    const wallet = await api.get('/wallet?agent_id=agent-fail&chain=ethereum');
    expect(wallet.body.deployed).toBe(false);
    expect(clientId).toBeTruthy();
  });

  it('names the failing call of a batch: call_index in the 400', async () => {
    const { api } = await service().newKey();
    const eth = service().devnet.chain('ethereum');
    const counter = eth.testContracts.counter;
    const res = await api.post('/execute', {
      agent_id: 'agent-batch-fail',
      chain: 'ethereum',
      batch_calls: [
        { target_contract: counter, calldata: '0xd09de08a', value: '0' },
        { target_contract: counter, calldata: fail, value: '0' },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'simulation_failed', call_index: 1 });
    expect(JSON.stringify(res.body)).toContain('Counter: forced failure');
  });

  it('simulates a successful call without sending anything', async () => {
    const { api } = await service().newKey();
    const eth = service().devnet.chain('ethereum');
    const res = await api.post('/simulate', counterCall('agent-sim', 'ethereum', eth.testContracts.counter));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'pending', tx_hash: null, estimated_cost_usd: 0 });
    expect(res.body.estimated_gas).toBeGreaterThan(21_000);
    const wallet = await api.get('/wallet?agent_id=agent-sim&chain=ethereum');
    expect(wallet.body.deployed).toBe(false);
  });
});

describe('wallets', () => {
  it('equal the factory getAddress and permissionless toSimpleSmartAccount for the derived owner', async () => {
    const { api, clientId } = await service().newKey();
    const eth = service().devnet.chain('ethereum');
    const client = service().devnet.publicClient('ethereum');
    const agentId = 'agent-address-check';
    const owner = deriveOwnerAccount(service().serviceSecret, clientId);
    const salt = walletSalt(agentId);
    const { fromFactory, fromPermissionless } = await referenceWalletAddresses({
      client,
      factory: eth.simpleAccountFactory,
      entryPoint: eth.entryPoint,
      owner,
      salt,
    });
    const res = await api.get(`/wallet?agent_id=${agentId}`); // chain defaults to ethereum
    expect(res.status).toBe(200);
    expect(getAddress(res.body.smart_wallet_address)).toBe(getAddress(fromFactory));
    expect(getAddress(fromPermissionless)).toBe(getAddress(fromFactory));
  });

  it('are the same for the same (key, agent) and differ across agents and keys', async () => {
    const a = await service().newKey();
    const b = await service().newKey();
    const w = async (api: typeof a.api, agent: string) => (await api.get(`/wallet?agent_id=${agent}&chain=base`)).body.smart_wallet_address;
    expect(await w(a.api, 'x')).toBe(await w(a.api, 'x'));
    expect(await w(a.api, 'x')).not.toBe(await w(a.api, 'y'));
    expect(await w(a.api, 'x')).not.toBe(await w(b.api, 'x'));
  });
});

describe('isolation between keys', () => {
  it("answers another key's request id with 404", async () => {
    const a = await service().newKey();
    const b = await service().newKey();
    const eth = service().devnet.chain('ethereum');
    const res = await a.api.post('/execute', counterCall('shared-name', 'ethereum', eth.testContracts.counter));
    expect(res.status).toBe(200);
    const other = await b.api.get(`/status/${res.body.request_id}`);
    expect(other.status).toBe(404);
    expect(other.body.error).toBe('not_found');
    const unknown = await b.api.get('/status/req-doesnotexist');
    expect(unknown.status).toBe(404);
    expect((await a.api.waitForTerminal(res.body.request_id)).status).toBe('confirmed');
  });
});
