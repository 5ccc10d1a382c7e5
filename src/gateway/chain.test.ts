/**
 * The gateway against real parts end to end: the embedded store, the devnet (started by test/globalSetup.ts),
 * the in-process chain worker and the execution controller.
 */
import { encodeFunctionData, parseAbi, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createChainWorker, type LocalChainWorker } from '../chain/index.ts';
import type { ChainName } from '../config/chains.ts';
import { startExecutionController, type ExecutionController } from '../controller/execution/controller.ts';
import { chainConfigsFromManifest, loadManifest } from '../devnet/devnet.ts';
import type { DevnetManifest } from '../devnet/manifest.ts';
import { createPaymentPolicies } from '../payments/policies.ts';
import { DEFAULT_PAYMENT_SETTINGS } from '../payments/settings.ts';
import { paymentTermsOf } from '../payments/terms.ts';
import { pino } from 'pino';
import { openTestGateway, type TestGateway } from './testing/harness.ts';

const counterAbi = parseAbi(['function increment()', 'function fail()', 'function number() view returns (uint256)']);
const gateAbi = parseAbi(['function pass()']);
const INCREMENT = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
const FAIL = encodeFunctionData({ abi: counterAbi, functionName: 'fail' });
const PASS = encodeFunctionData({ abi: gateAbi, functionName: 'pass' });

describe('gateway with the devnet, a real chain worker and the execution controller', () => {
  let manifest: DevnetManifest;
  let workers: Map<ChainName, LocalChainWorker>;
  let gw: TestGateway;
  let controller: ExecutionController;
  let apiKey: string;
  let counter: Address;
  let gate: Address;

  beforeAll(async () => {
    const path = process.env.AGENT_WALLET_TEST_MANIFEST;
    if (!path) throw new Error('AGENT_WALLET_TEST_MANIFEST is not set: run through vitest (test/globalSetup.ts)');
    manifest = loadManifest(path);
    workers = new Map();
    const configs = chainConfigsFromManifest(manifest);
    for (const config of configs) {
      workers.set(config.name, await createChainWorker(config, { serviceSecret: 'gateway-test-service-secret-0123456789' }));
    }
    const base = manifest.chains.find((c) => c.name === 'base')!;
    counter = base.testContracts.counter;
    gate = base.testContracts.gate;
    const terms = paymentTermsOf(configs);
    gw = await openTestGateway({ workers, payments: { terms } });
    const payments = createPaymentPolicies({
      store: gw.store,
      namespace: 'default',
      terms,
      settings: DEFAULT_PAYMENT_SETTINGS,
      logger: pino({ level: 'silent' }),
    });
    controller = await startExecutionController({ store: gw.store, workers, payments });
    ({ apiKey } = await gw.newKey({ mode: 'sponsored' }));
  });
  afterAll(async () => {
    await controller?.stop();
    await gw?.close();
    for (const w of workers?.values() ?? []) await w.close();
  });

  const post = (url: string, payload: object, headers: Record<string, string> = {}, key = apiKey) =>
    gw.app.inject({ method: 'POST', url, headers: { 'x-api-key': key, ...headers }, payload });
  const get = (url: string, key = apiKey) => gw.app.inject({ url, headers: { 'x-api-key': key } });

  it('GET /wallet: deterministic per (key, agent), different per key; aliases resolve to the same chain', async () => {
    const a1 = (await get('/wallet?agent_id=bot-1&chain=ethereum')).json();
    expect(a1).toEqual({
      agent_id: 'bot-1',
      smart_wallet_address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
      deployed: false,
      message: expect.stringContaining('counterfactual'),
      chain: 'ethereum',
    });
    expect((await get('/wallet?agent_id=bot-1&chain=eth')).json()).toEqual(a1);
    expect((await get('/wallet?agent_id=bot-1')).json()).toEqual(a1);
    expect((await get('/wallet?agent_id=bot-2')).json().smart_wallet_address).not.toBe(a1.smart_wallet_address);
    const other = await gw.newKey();
    expect((await get('/wallet?agent_id=bot-1', other.apiKey)).json().smart_wallet_address).not.toBe(a1.smart_wallet_address);
    expect((await get('/wallet?agent_id=bot-1&chain=arb')).json().chain).toBe('arbitrum');
  });

  it('GET /wallet/balance: native and token balances with decimals and formatting', async () => {
    const res = await get('/wallet/balance?agent_id=bot-1&chain=base');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ agent_id: 'bot-1', chain: 'base', deployed: false, native: { symbol: 'ETH' } });
    expect(body.native.formatted).toBe(Number(BigInt(body.native.wei)) === 0 ? '0' : expect.any(String));
    const symbols = body.tokens.map((t: { symbol: string }) => t.symbol).sort();
    expect(symbols).toEqual(expect.arrayContaining(['USDC', 'aUSD']));
    for (const t of body.tokens) {
      expect(t.decimals).toBe(t.symbol === 'WETH' ? 18 : 6);
      expect(t.raw).toMatch(/^[0-9]+$/);
      expect(typeof t.accepted_for_payment).toBe('boolean');
    }
  });

  it('GET /health reports each chain reachable with its head block', async () => {
    const body = (await gw.app.inject({ url: '/health' })).json();
    expect(body.status).toBe('ok');
    expect(body.chains.map((c: { chain: string }) => c.chain).sort()).toEqual(['arbitrum', 'base', 'ethereum']);
    for (const c of body.chains) expect(c).toMatchObject({ reachable: true, block_number: expect.stringMatching(/^[0-9]+$/) });
  });

  it('POST /simulate: pending, sim_ id, integer gas, zero cost when sponsored; nothing stored', async () => {
    const res = await post('/simulate', { agent_id: 'bot-1', chain: 'base', target_contract: counter, calldata: INCREMENT, value: '0' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual({
      request_id: expect.stringMatching(/^sim_[0-9a-z]{26}$/),
      status: 'pending',
      smart_wallet_address: (await get('/wallet?agent_id=bot-1&chain=base')).json().smart_wallet_address,
      estimated_gas: expect.any(Number),
      // base is an L2: the part of the gas paying its L1 data fee (optional field, absent on ethereum)
      l1_data_gas: expect.any(Number),
      estimated_cost_usd: 0,
      tx_hash: null,
      message: expect.any(String),
    });
    expect(Number.isInteger(body.estimated_gas) && body.estimated_gas > 21_000).toBe(true);
    expect(body.l1_data_gas > 0 && body.l1_data_gas < body.estimated_gas).toBe(true);
    expect((await get(`/status/${body.request_id}`)).statusCode).toBe(404);
    expect((await gw.store.list('ExecutionRequest')).items).toHaveLength(0);
  });

  it('POST /simulate of a reverting call → 400 simulation_failed with the revert reason', async () => {
    const res = await post('/simulate', { agent_id: 'bot-1', chain: 'base', target_contract: counter, calldata: FAIL });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'simulation_failed', revert_reason: expect.stringContaining('Counter: forced failure') });
  });

  it('POST /execute: 200 queued once the controller queues it; status then follows the controller', async () => {
    const res = await post('/execute', { agent_id: 'bot-exec', chain: 'base', target_contract: counter, calldata: INCREMENT, strategy_id: 'st-1' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      request_id: expect.stringMatching(/^req-[0-9a-z]{26}$/),
      status: 'queued',
      smart_wallet_address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
      estimated_cost_usd: 0,
    });
    expect(body.estimated_gas).toBeGreaterThan(21_000);
    const stored = await gw.store.get('ExecutionRequest', body.request_id);
    expect(stored.metadata.labels).toMatchObject({
      'agentwallet.dev/api-client': expect.any(String),
      'agentwallet.dev/chain': 'base',
      'agentwallet.dev/agent-hash': expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(stored.spec).toMatchObject({ agentId: 'bot-exec', chain: 'base', batch: false, strategyId: 'st-1', paymentMode: 'sponsored' });

    // Past the decision the request belongs to the controller and the bundler: the status shows its progress.
    await vi.waitFor(async () => expect((await get(`/status/${body.request_id}`)).json().status).not.toBe('queued'), {
      timeout: 10_000,
      interval: 50,
    });
    const status = (await get(`/status/${body.request_id}`)).json();
    expect(['broadcasting', 'confirmed']).toContain(status.status);
    expect(status).toMatchObject({ request_id: body.request_id, chain: 'base', cost_usd: 0, agent_id: 'bot-exec', strategy_id: 'st-1' });
    expect(status.smart_wallet_address).toBe(body.smart_wallet_address);
    expect(Date.parse(status.updated_at)).toBeGreaterThanOrEqual(Date.parse(status.created_at));
  });

  it('POST /execute with a batch runs the calls from the agent wallet', async () => {
    const res = await post('/execute', {
      agent_id: 'bot-batch',
      chain: 'base',
      batch_calls: [
        { target_contract: counter, calldata: INCREMENT, value: '0' },
        { target_contract: counter, calldata: INCREMENT },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await gw.store.get('ExecutionRequest', res.json().request_id)).spec).toMatchObject({ batch: true, calls: [{}, {}] });
  });

  it('POST /execute of a reverting call → 400 simulation_failed with request_id; status says failed', async () => {
    const res = await post('/execute', { agent_id: 'bot-exec', chain: 'base', target_contract: gate, calldata: PASS });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body).toMatchObject({
      error: 'simulation_failed',
      request_id: expect.stringMatching(/^req-/),
      revert_reason: expect.stringContaining('Gate: closed'),
    });
    expect((await get(`/status/${body.request_id}`)).json()).toMatchObject({
      status: 'failed',
      failure: { code: 'simulation_reverted' },
    });
  });

  it('Idempotency-Key replay of a failed request: the same 400 body, with Idempotent-Replayed: true', async () => {
    const body = { agent_id: 'bot-idem-fail', chain: 'base', target_contract: gate, calldata: PASS };
    const headers = { 'idempotency-key': 'fails-once' };
    const first = await post('/execute', body, headers);
    expect(first.statusCode).toBe(400);
    expect(first.json()).toMatchObject({ error: 'simulation_failed', request_id: expect.stringMatching(/^req-idem-/) });
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post('/execute', body, headers);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual(first.json());
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('Idempotency-Key: same body → the first request (once, even concurrently); different body → 422', async () => {
    const body = { agent_id: 'bot-idem', chain: 'base', target_contract: counter, calldata: INCREMENT };
    const headers = { 'idempotency-key': 'order-42' };
    const [first, second] = await Promise.all([post('/execute', body, headers), post('/execute', { ...body, chain: 'BASE' }, headers)]);
    expect(first.statusCode, first.body).toBe(200);
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json().request_id).toBe(first.json().request_id);
    expect([first.headers['idempotent-replayed'], second.headers['idempotent-replayed']].filter(Boolean)).toEqual(['true']);
    const mine = (await gw.store.list('ExecutionRequest')).items.filter((r) => r.spec.agentId === 'bot-idem');
    expect(mine).toHaveLength(1);
    expect(mine[0]!.metadata.name).toMatch(/^req-idem-[0-9a-f]{40}$/);
    // The controller orders a wallet's operations by this time-sortable acceptance id, not by the name.
    expect(mine[0]!.metadata.annotations?.['agentwallet.dev/accepted']).toMatch(/^req-[0-9a-z]{26}$/);

    const third = await post('/execute', body, headers);
    expect(third.json().request_id).toBe(first.json().request_id);
    expect(third.headers['idempotent-replayed']).toBe('true');

    const mismatch = await post('/execute', { ...body, calldata: FAIL }, headers);
    expect(mismatch.statusCode).toBe(422);
    expect(mismatch.json()).toMatchObject({ error: 'idempotency_key_mismatch', request_id: first.json().request_id });

    // The same idempotency key under another API key is another request.
    const other = await gw.newKey();
    const theirs = await post('/execute', body, headers, other.apiKey);
    expect(theirs.statusCode).toBe(200);
    expect(theirs.json().request_id).not.toBe(first.json().request_id);
  });

  it('a manual key without a payment gets the 402 of spec §2.8, exactly its fields, and the request waits for one', async () => {
    const manual = await gw.newKey({ mode: 'manual' });
    const res = await post('/execute', { agent_id: 'bot-m', chain: 'base', target_contract: counter, calldata: INCREMENT }, {}, manual.apiKey);
    expect(res.statusCode).toBe(402);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(
      // l1_data_gas: optional, on an L2 (base) only
      ['accepted_tokens', 'amount_usd', 'chain', 'error', 'l1_data_gas', 'payment_address', 'request_id', 'required_amount_raw', 'smart_wallet_address'].sort(),
    );
    expect(body).toMatchObject({ error: 'payment_required', chain: 'base', accepted_tokens: ['USDC', 'aUSD'] });
    expect(body.amount_usd).toBeGreaterThan(0);
    expect(Object.keys(body.required_amount_raw)).toEqual(body.accepted_tokens);
    const stored = await gw.store.get('ExecutionRequest', body.request_id);
    expect(stored.status?.phase).toBe('PaymentRequired');
    expect(stored.status?.payment?.quote?.amountUsd).toBe(body.amount_usd);
  });

  it('without a controller decision in time → 500 decision_timeout with the request_id to poll', async () => {
    const slow = await openTestGateway({ workers, decisionTimeoutMs: 200 });
    try {
      const { apiKey: key } = await slow.newKey();
      const res = await slow.app.inject({
        method: 'POST',
        url: '/execute',
        headers: { 'x-api-key': key },
        payload: { agent_id: 'bot-t', chain: 'base', target_contract: counter, calldata: INCREMENT },
      });
      expect(res.statusCode).toBe(500);
      const body = res.json();
      expect(body).toMatchObject({ error: 'decision_timeout', request_id: expect.stringMatching(/^req-/) });
      const status = await slow.app.inject({ url: `/status/${body.request_id}`, headers: { 'x-api-key': key } });
      expect(status.json().status).toBe('pending');
    } finally {
      await slow.close();
    }
  });
});
