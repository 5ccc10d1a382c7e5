/**
 * Finished requests whose inclusion left the chain, on a devnet of its own (evm_revert rewrites history under
 * everything else). Each transition: a snapshot, a request confirmed, the service stopped, the chain rewound to
 * the snapshot and changed as the case needs (as a devnet killed with its last blocks unsaved comes back), the
 * service started again: its first look at the chain finds what changed, before anything else reconciles. The
 * chain reset at the end happens under the running service: its periodic look finds it.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, type Address, type Hex } from 'viem';
import { entryPoint07Abi } from '../../src/chain/abi.ts';
import { createChainWorker } from '../../src/chain/worker/index.ts';
import type { ChainConfig } from '../../src/config/chainConfig.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { startDevnet, type Devnet } from '../../src/devnet/devnet.ts';
import { createKey } from '../../src/keys/manage.ts';
import { startEmbeddedService, type EmbeddedService } from '../../src/roles/embedded.ts';
import { WebhookEventSchema, type WebhookEvent } from '../../src/webhooks/event.ts';
import { devnetClients, newServiceSecret, tempDir } from '../support/env.ts';
import { apiClient, type TestApi } from '../support/http.ts';
import { newPayer } from '../support/payer.ts';
import { until } from '../support/until.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

const CHAIN = 'base';

describe('a finished request whose inclusion left the chain', () => {
  let devnet: Devnet;
  let clients: ReturnType<typeof devnetClients>;
  let configs: ChainConfig[];
  let service: EmbeddedService | undefined;
  let receiver: WebhookReceiver;
  const dataDir = tempDir('aw-inclusion-');
  const secret = newServiceSecret();
  let keys: { sponsored: { key: string; id: string; webhookSecret: string }; manual: { key: string; id: string } };
  let counter: Address;

  const rpc = <T = unknown>(method: string, params: unknown[] = []): Promise<T> =>
    clients.publicClient(CHAIN).request({ method: method as never, params: params as never }) as Promise<T>;
  const counterValue = () => clients.publicClient(CHAIN).readContract({ address: counter, abi: counterAbi, functionName: 'number' });
  const api = (which: 'sponsored' | 'manual'): TestApi => apiClient(service!.url, keys[which].key);
  const record = (id: string) => service!.store.get('ExecutionRequest', id);
  const start = async (inclusionWatchMs = 0, retentionSeconds?: number) => {
    service = await startEmbeddedService({
      dataDir,
      chains: configs,
      serviceSecret: secret,
      port: 0,
      inclusionPollMs: 50,
      inclusionWatchMs,
      ...(retentionSeconds !== undefined && { retentionSeconds }),
      webhooks: { allowLoopback: true, ca: receiver.ca, retryScheduleSeconds: [0.05, 0.1, 0.2] },
    });
  };
  const stop = async () => {
    await service?.stop();
    service = undefined;
  };
  const increment = (agent: string, callback?: string) => ({
    agent_id: agent,
    chain: CHAIN,
    target_contract: counter,
    calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
    value: '0',
    ...(callback !== undefined && { callback_url: callback }),
  });
  const executeConfirmed = async (agent: string, callback?: string) => {
    const res = await api('sponsored').post('/execute', increment(agent, callback));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const done = await api('sponsored').waitForTerminal(res.body.request_id, 30_000);
    expect(done.status).toBe('confirmed');
    return done as { request_id: string; tx_hash: Hex; block_number: string };
  };
  /** The receipt of `tx` is on chain, in the block `blockHash` names. */
  const onChainIn = async (tx: Hex, blockHash: string | undefined) => {
    const receipt = await rpc<{ blockHash: string; status: string } | null>('eth_getTransactionReceipt', [tx]);
    expect(receipt, `receipt of ${tx}`).not.toBeNull();
    expect(receipt!.blockHash).toBe(blockHash);
  };

  beforeAll(async () => {
    devnet = await startDevnet({ dataDir: tempDir('aw-inclusion-devnet-'), log: () => undefined });
    clients = devnetClients(devnet.manifest, devnet.manifestPath);
    configs = devnet.chainConfigs();
    counter = clients.chain(CHAIN).testContracts.counter as Address;
    receiver = await startWebhookReceiver();
    await start();
    const sponsored = await createKey(service!.store, { mode: 'sponsored', requestsPerSecond: 1_000, burst: 1_000 }, undefined, service!.webhookSecrets);
    const manual = await createKey(service!.store, { mode: 'manual', requestsPerSecond: 1_000, burst: 1_000 });
    keys = {
      sponsored: { key: sponsored.api_key, id: sponsored.key.id, webhookSecret: sponsored.webhook_secret! },
      manual: { key: manual.api_key, id: manual.key.id },
    };
  });
  afterAll(async () => {
    await stop();
    await receiver?.close();
    await devnet?.stop();
  });

  it('moved to another block (the same transaction mined again): stays confirmed, with the new block; no new event', async () => {
    const snapshot = await rpc<string>('evm_snapshot');
    const before = await counterValue();
    const hook = `${receiver.origin}/moved`;
    const first = await executeConfirmed('moved-agent', hook);
    await until('the confirmed event', async () => (receiver.received.some((d) => d.headers['webhook-id'] === `evt_${first.request_id}`) ? true : undefined));
    const raw = await rpc<Hex>('eth_getRawTransactionByHash', [first.tx_hash]);
    await stop();

    await rpc('evm_revert', [snapshot]);
    await rpc('evm_mine'); // another block where the bundle was
    await rpc('eth_sendRawTransaction', [raw]); // the same bundle, mined again one block later: what a devnet replay does
    await start();

    const now = (await api('sponsored').get(`/status/${first.request_id}`)).body;
    expect(now).toMatchObject({ status: 'confirmed', tx_hash: first.tx_hash });
    expect(BigInt(now.block_number)).toBe(BigInt(first.block_number) + 1n);
    expect(now.lost_inclusions).toBeUndefined();
    const r = await record(first.request_id);
    await onChainIn(first.tx_hash, r.status!.blockHash);
    expect(r.status!.inclusionChanges).toEqual([
      expect.objectContaining({ kind: 'Moved', txHash: first.tx_hash, blockNumber: first.block_number, newBlockNumber: now.block_number, phase: 'Confirmed' }),
    ]);
    expect(r.status!.conditions!.find((c) => c.type === 'Submitted')).toMatchObject({ reason: 'InclusionMoved' });
    expect(r.status!.webhookEvents!.map((e) => e.id)).toEqual([`evt_${first.request_id}`]);
    expect((await counterValue()) - before).toBe(1n);
  });

  it('gone, its operation still valid: broadcasting, sent again, confirmed again; three events in order with their own ids', async () => {
    const snapshot = await rpc<string>('evm_snapshot');
    const before = await counterValue();
    const hook = `${receiver.origin}/resent`;
    const first = await executeConfirmed('resent-agent', hook);
    const id = first.request_id;
    await until('the confirmed event', async () => (receiver.received.some((d) => d.headers['webhook-id'] === `evt_${id}`) ? true : undefined));
    await stop();

    await rpc('evm_revert', [snapshot]);
    await rpc('evm_mine'); // the chain moves on without it
    await start();
    // The start judged it before anything else ran: back in flight, its lost inclusion said.
    const reopened = await record(id);
    expect(reopened.status!.inclusionChanges).toEqual([expect.objectContaining({ kind: 'Lost', txHash: first.tx_hash, phase: 'Confirmed' })]);

    const again = await api('sponsored').waitForTerminal(id, 30_000);
    expect(again.status).toBe('confirmed');
    expect(again.lost_inclusions).toEqual([{ tx_hash: first.tx_hash, block_number: first.block_number, lost_at: expect.any(String) }]);
    const r = await record(id);
    await onChainIn(again.tx_hash, r.status!.blockHash);
    expect(r.status!.submitAttempts).toBeGreaterThanOrEqual(2);
    expect((await counterValue()) - before).toBe(1n); // the same signed operation, executed once on this chain

    // Delivery is at least once (a slow answer is retried): a receiver keeps one per webhook-id, and so does this.
    const deliveries = await until('three events delivered', async () => {
      const once = new Map(receiver.received.filter((d) => d.body.includes(id)).map((d) => [String(d.headers['webhook-id']), d] as const));
      return once.size >= 3 ? [...once.values()] : undefined;
    });
    const events = deliveries.map((d) => {
      const headers = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k, String(v)]));
      return WebhookEventSchema.parse(new Webhook(keys.sponsored.webhookSecret).verify(d.body, headers)) as WebhookEvent;
    });
    expect(events.map((e) => [e.id, e.type, e.data.status, e.data.tx_hash])).toEqual([
      [`evt_${id}`, 'execution.confirmed', 'confirmed', first.tx_hash],
      [`evt_${id}_2`, 'execution.inclusion_lost', 'broadcasting', null],
      [`evt_${id}_3`, 'execution.confirmed', 'confirmed', again.tx_hash],
    ]);
    expect(events[2]!.data).toEqual(again); // the status record, exactly
    // The receiver has the last one before the service records its answer.
    await until('all three recorded as delivered', async () =>
      (await record(id)).status!.webhookEvents!.map((e) => e.state).join() === 'Delivered,Delivered,Delivered' ? true : undefined,
    );
  });

  it('gone, and another operation took its nonce: failed with inclusion_lost, and it never ran', async () => {
    const snapshot = await rpc<string>('evm_snapshot');
    const before = await counterValue();
    const first = await executeConfirmed('rival-agent');
    await stop();

    await rpc('evm_revert', [snapshot]);
    // The same wallet (same service secret, key and agent) signs another operation with that nonce.
    const rival = await createChainWorker(configs.find((c) => c.name === CHAIN)!, { serviceSecret: secret });
    try {
      const calls = [{ target: counter, value: '0', data: encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [5n] }) }];
      const op = await rival.prepareOperation({ apiClient: keys.sponsored.id, agentId: 'rival-agent' }, calls, { requestId: 'rival' });
      await rival.submitOperation(op);
      await until('the rival included', async () => ((await rival.getOperationOutcome(op)).state === 'included' ? true : undefined), 30_000, 25);
    } finally {
      await rival.close();
    }
    await start();

    const now = (await api('sponsored').get(`/status/${first.request_id}`)).body;
    expect(now).toMatchObject({ status: 'failed', tx_hash: null, block_number: null, failure: { code: 'inclusion_lost' } });
    expect(now.failure.message).toContain('nonce_used');
    expect(now.lost_inclusions).toEqual([{ tx_hash: first.tx_hash, block_number: first.block_number, lost_at: expect.any(String) }]);
    expect((await counterValue()) - before).toBe(5n); // the rival ran; the failed request did not
  });

  it('gone with the transfer that paid for it: failed with payment_lost, not sent again, nothing charged', async () => {
    const snapshot = await rpc<string>('evm_snapshot');
    const before = await counterValue();
    const body = increment('paying-agent');
    const quote = await api('manual').post('/execute', body);
    expect(quote.status, JSON.stringify(quote.body)).toBe(402);
    const payer = await newPayer(clients, CHAIN);
    const paid = await payer.pay('aUSD', quote.body.payment_address, BigInt(quote.body.required_amount_raw.aUSD));
    const proof = { request_id: quote.body.request_id, payer: payer.address, token: 'aUSD', chain: CHAIN, tx_hash: paid };
    const queued = await api('manual').post('/execute', body, { 'x-payment-proof': JSON.stringify(proof) });
    expect(queued.status, JSON.stringify(queued.body)).toBe(200);
    const id = queued.body.request_id as string;
    expect((await api('manual').waitForTerminal(id, 30_000)).status).toBe('confirmed');
    const op = (await record(id)).status!.userOperation!;
    await stop();

    await rpc('evm_revert', [snapshot]); // the payment and the execution are both gone
    await rpc('evm_mine');
    await start();

    const now = (await api('manual').get(`/status/${id}`)).body;
    expect(now).toMatchObject({ status: 'failed', tx_hash: null, cost_usd: 0, failure: { code: 'payment_lost' } });
    expect(now.failure.message).toContain(paid);
    expect(now.credit).toBeNull(); // nothing was paid: no credit is left either
    const r = await record(id);
    expect(r.status!.conditions!.find((c) => c.type === 'PaymentSatisfied')).toMatchObject({ status: 'False', reason: 'PaymentLost' });
    // Not executed, and not held to be sent: its nonce is still unused on chain, and the worker does not hold it.
    expect(await counterValue()).toBe(before);
    const nonce = await clients.publicClient(CHAIN).readContract({
      address: op.entryPoint as Address,
      abi: entryPoint07Abi,
      functionName: 'getNonce',
      args: [op.sender as Address, 0n],
    });
    expect(nonce).toBe(BigInt(op.nonce));
    expect((await service!.workers.get(CHAIN)!.getOperationOutcome(op)).state).toBe('unknown');
  });

  it('a chain reset under the running service: every request it lost is sent again and confirmed on the chain it has now; older ones stay', async () => {
    await stop();
    await start(200); // looks at the chain every 200 ms
    const kept = await executeConfirmed('reset-agent-0');
    const before = await counterValue();
    const snapshot = await rpc<string>('evm_snapshot');
    const lost = await Promise.all(['reset-agent-1', 'reset-agent-2', 'reset-agent-1', 'reset-agent-2'].map((a) => executeConfirmed(a)));
    expect((await counterValue()) - before).toBe(4n);

    await rpc('evm_revert', [snapshot]); // as a devnet reset would: every block since the snapshot is gone
    const after = await Promise.all(
      lost.map((l) =>
        until(`${l.request_id} confirmed again`, async () => {
          const s = (await api('sponsored').get(`/status/${l.request_id}`)).body;
          return s.status === 'confirmed' && s.lost_inclusions?.length === 1 ? s : undefined;
        }),
      ),
    );
    // Sent again, each in a block of the chain as it is now. The bundle may hash as before: re-signed with the same
    // nonce and fees it is the same transaction, and that is as good.
    for (const s of after) {
      const r = await record(s.request_id);
      expect(r.status!.submitAttempts).toBeGreaterThanOrEqual(2);
      await onChainIn(s.tx_hash, r.status!.blockHash);
    }
    expect((await counterValue()) - before).toBe(4n); // each executed once on the chain as it is now
    const untouched = (await api('sponsored').get(`/status/${kept.request_id}`)).body;
    expect(untouched).toMatchObject({ status: 'confirmed', tx_hash: kept.tx_hash });
    expect(untouched.lost_inclusions).toBeUndefined();

    const health = await until('/health consistent', async () => {
      const h = (await apiClient(service!.url).get('/health')).body;
      return h.chains.find((c: { chain: string }) => c.chain === CHAIN)?.history === 'consistent' ? h : undefined;
    });
    expect(health.status).toBe('ok');
  });

  it('archived, then the chain was reset: /status answers what was archived; /health says the chain lost archived inclusions until a newer one is archived', async () => {
    await stop();
    await start(200, 1); // finished requests leave the store after 1 s
    const gone = async (id: string) => {
      try {
        await record(id);
        return undefined;
      } catch {
        return true;
      }
    };
    const history = async () => (await apiClient(service!.url).get('/health')).body.chains.find((c: { chain: string }) => c.chain === CHAIN);
    const snapshot = await rpc<string>('evm_snapshot');
    const archived = await executeConfirmed('archived-agent');
    await until('archived', () => gone(archived.request_id));

    await rpc('evm_revert', [snapshot]);
    // Out of the store, out of reach: the archive keeps the status it was archived with (docs/api.md).
    expect((await api('sponsored').get(`/status/${archived.request_id}`)).body).toMatchObject({ status: 'confirmed', tx_hash: archived.tx_hash });
    const lost = await until('/health mismatch', async () => ((await history()).history === 'mismatch' ? history() : undefined));
    expect(lost.history_detail).toContain(`archived request ${archived.request_id}`);
    expect((await apiClient(service!.url).get('/health')).body.status).toBe('degraded');

    // A newer inclusion archived on the chain as it is now becomes the mark: the chain bears it out.
    const newer = await executeConfirmed('archived-agent-2');
    await until('archived', () => gone(newer.request_id));
    await until('/health consistent', async () => ((await history()).history === 'consistent' ? true : undefined));
  });
});
