import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, type Hex } from 'viem';
import { createChainWorker } from '../../src/chain/worker/index.ts';
import type { ChainConfig } from '../../src/config/chainConfig.ts';
import { devnetChain, devnetPublicClient } from '../../src/devnet/clients.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { startDevnet, type Devnet } from '../../src/devnet/devnet.ts';
import { createKey } from '../../src/keys/manage.ts';
import { startEmbeddedService, type EmbeddedService } from '../../src/roles/embedded.ts';
import { newServiceSecret, tempDir } from '../support/env.ts';
import { apiClient, type TestApi } from '../support/http.ts';

/**
 * Reorgs and lost chain history, on a devnet of its own (anvil_reorg and evm_revert rewrite the chain under
 * everything else): `confirmed` means included at the chain's confirmation depth (3 on "ethereum" here); an
 * inclusion a reorg removes before that is sent again, the same signed operation; one whose nonce another
 * operation took fails with nonce_used; a chain that lost what the store recorded is reported by /health.
 */
describe('reorgs and the confirmation depth', () => {
  const DEPTH = 3;
  let devnet: Devnet;
  let configs: ChainConfig[];
  let service: EmbeddedService;
  let api: TestApi;
  let clientId: string;
  let apiKey: string | undefined;
  const dataDir = tempDir('aw-reorg-');
  const secret = newServiceSecret();
  let rpcUrl: string;
  let counter: Hex;
  let startSnapshot: string;

  const rpc = async <T = unknown>(method: string, params: unknown[] = []): Promise<T> => {
    const res = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const body = (await res.json()) as { result?: T; error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
    return body.result as T;
  };
  const counterValue = async () =>
    devnetPublicClient(devnetChain(devnet.manifest.chains.find((c) => c.name === 'ethereum')!)).readContract({
      address: counter,
      abi: counterAbi,
      functionName: 'number',
    });
  const start = async () => {
    // No periodic look at finished inclusions: the last test sees what /health reports before the start's look repairs it.
    service = await startEmbeddedService({ dataDir, chains: configs, serviceSecret: secret, port: 0, inclusionPollMs: 50, inclusionWatchMs: 0 });
    if (apiKey !== undefined) api = apiClient(service.url, apiKey); // a new port after a restart
  };
  /** Polls GET /status until `done` holds, mining a block now and then (anvil mines only on transactions). */
  const until = async (id: string, done: (s: { status: string; tx_hash: string | null }) => boolean, mine = false) => {
    for (let i = 0; i < 600; i++) {
      const r = await api.get(`/status/${id}`);
      if (done(r.body)) return r.body;
      if (mine && i % 4 === 3) await rpc('evm_mine');
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new Error(`status of ${id} never got there: ${JSON.stringify((await api.get(`/status/${id}`)).body)}`);
  };
  const execute = async (agent: string, calldata: Hex) => {
    const res = await api.post('/execute', { agent_id: agent, chain: 'ethereum', target_contract: counter, calldata, value: '0' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.request_id as string;
  };

  beforeAll(async () => {
    devnet = await startDevnet({ dataDir: tempDir('aw-reorg-devnet-'), log: () => undefined });
    configs = devnet.chainConfigs().map((c) => (c.name === 'ethereum' ? { ...c, confirmations: DEPTH } : c));
    const eth = devnet.manifest.chains.find((c) => c.name === 'ethereum')!;
    rpcUrl = eth.rpcUrl;
    counter = eth.testContracts.counter as Hex;
    startSnapshot = await rpc<string>('evm_snapshot');
    await start();
    const key = await createKey(service.store, { mode: 'sponsored', requestsPerSecond: 1_000, burst: 1_000 });
    apiKey = key.api_key;
    api = apiClient(service.url, apiKey);
    clientId = key.key.id;
  });
  afterAll(async () => {
    await service?.stop();
    await devnet?.stop();
  });

  it('is broadcasting, with its tx hash, until the inclusion is deep enough; a reorg before that sends it again, once', async () => {
    const before = await counterValue();
    const id = await execute('reorg-a', encodeFunctionData({ abi: counterAbi, functionName: 'increment' }));
    const included = await until(id, (s) => s.tx_hash !== null);
    expect(included.status).toBe('broadcasting'); // 1 of 3 confirmations: not confirmed yet
    const first = await service.store.get('ExecutionRequest', id);
    expect(first.status?.conditions?.find((c) => c.type === 'Submitted')).toMatchObject({ reason: 'Included' });

    await rpc('anvil_reorg', [1, []]); // the block holding the bundle is replaced by an empty one
    expect(await rpc('eth_getTransactionReceipt', [included.tx_hash])).toBeNull();

    const done = await until(id, (s) => s.status === 'confirmed', true);
    const record = await service.store.get('ExecutionRequest', id);
    expect(record.status?.submitAttempts).toBeGreaterThanOrEqual(2); // sent again after the reorg
    expect(done.tx_hash).not.toBe(included.tx_hash);
    const receipt = await rpc<{ blockHash: string; status: string }>('eth_getTransactionReceipt', [done.tx_hash]);
    expect(receipt).toMatchObject({ status: '0x1', blockHash: record.status?.blockHash });
    expect((await counterValue()) - before).toBe(1n); // the same operation, executed once
  });

  it('fails with nonce_used when, after a reorg, another operation took the nonce', async () => {
    const before = await counterValue();
    const id = await execute('reorg-b', encodeFunctionData({ abi: counterAbi, functionName: 'increment' }));
    await until(id, (s) => s.tx_hash !== null);
    await service.stop();

    await rpc('anvil_reorg', [1, []]);
    // The same wallet (same service secret, key and agent) signs a different operation with that nonce.
    const rival = await createChainWorker(configs.find((c) => c.name === 'ethereum')!, { serviceSecret: secret });
    try {
      const ref = { apiClient: clientId, agentId: 'reorg-b' };
      const calls = [{ target: counter, value: '0', data: encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [5n] }) }];
      const op = await rival.prepareOperation(ref, calls, { requestId: 'rival' });
      await rival.submitOperation(op);
      for (let i = 0; i < 200 && (await rival.getOperationOutcome(op)).state !== 'included'; i++) await new Promise((r) => setTimeout(r, 25));
    } finally {
      await rival.close();
    }

    await start();
    const failed = await until(id, (s) => s.status === 'failed');
    expect(failed.tx_hash).toBeNull(); // it points at no inclusion any more
    const record = await service.store.get('ExecutionRequest', id);
    expect(record.status?.failure).toMatchObject({ code: 'nonce_used', message: expect.stringContaining('reorganised away') });
    expect((await counterValue()) - before).toBe(5n); // the rival ran; the failed request never did
  });

  it('reports in /health when the chain lost what the store recorded as confirmed', async () => {
    const healthy = await apiClient(service.url).get('/health');
    expect(healthy.body.chains.find((c: { chain: string }) => c.chain === 'ethereum')).toMatchObject({ history: 'consistent' });

    await rpc('evm_revert', [startSnapshot]); // as a devnet reset would: every block of these tests is gone
    // Health probes are shared for 2 s: poll until the next one has looked.
    let lost = await apiClient(service.url).get('/health');
    for (let i = 0; i < 100 && lost.body.status === 'ok'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      lost = await apiClient(service.url).get('/health');
    }
    expect(lost.body.status).toBe('degraded');
    expect(lost.body.chains.find((c: { chain: string }) => c.chain === 'ethereum')).toMatchObject({
      history: 'mismatch',
      history_detail: expect.stringContaining('is not on the chain'),
    });
    expect(lost.body.chains.find((c: { chain: string }) => c.chain === 'base')).toMatchObject({ history: 'unknown' });

    // A restart looks at the chain first: the confirmed request it lost is sent again (same signed operation) and
    // confirmed on the chain as it is now; /health agrees again.
    const confirmed = (await service.store.list('ExecutionRequest')).items.find((r) => r.status?.phase === 'Confirmed')!;
    const lostTx = confirmed.status!.txHash;
    await service.stop();
    await start();
    const again = await until(confirmed.metadata.name, (s) => s.status === 'confirmed', true);
    expect(again.tx_hash).not.toBe(lostTx);
    expect(await rpc('eth_getTransactionReceipt', [again.tx_hash])).toMatchObject({ status: '0x1' });
    let healed = await apiClient(service.url).get('/health');
    for (let i = 0; i < 100 && healed.body.status !== 'ok'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      healed = await apiClient(service.url).get('/health');
    }
    expect(healed.body.chains.find((c: { chain: string }) => c.chain === 'ethereum')).toMatchObject({ history: 'consistent' });
  });
});
