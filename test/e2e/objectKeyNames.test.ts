/**
 * Names that are keys of every JavaScript object (`__proto__`, `constructor`, `toString`, …) sent wherever a
 * caller's string selects something: the proof's token and chain, the request's chain, a protocol's token symbol,
 * market and slug. Each must get a clear 4xx with its own `error` at once — never a lookup that reaches
 * Object.prototype (an audit's `token: "constructor"` wedged a request in `pending` and the gateway answered 500
 * after 30 s).
 */
import { encodeFunctionData, parseAbi } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalChain } from '../../src/config/chains.ts';
import { newPayer } from '../support/payer.ts';
import { startTestService, type TestService } from '../support/service.ts';

const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'] as const;
const CHAIN = 'base';
const INCREMENT = encodeFunctionData({ abi: parseAbi(['function increment()']), functionName: 'increment' });

let svc: TestService;
/** A real transfer to the treasury: a proof naming it gets past "no such transaction" to the token lookup. */
let paid: { payer: string; txHash: string };
beforeAll(async () => {
  // A short decision wait: a wedged request shows as a 500 decision_timeout here instead of after 20 s.
  svc = await startTestService({ decisionTimeoutMs: 5_000 });
  const payer = await newPayer(svc.devnet, CHAIN);
  paid = { payer: payer.address, txHash: await payer.pay('USDC', svc.devnet.chain(CHAIN).treasury, 1_000_000n) };
});
afterAll(async () => {
  await svc?.stop();
});

const body = (agent: string, extra: Record<string, unknown> = {}) => ({
  agent_id: agent,
  chain: CHAIN,
  target_contract: svc.devnet.chain(CHAIN).testContracts.counter,
  calldata: INCREMENT,
  ...extra,
});

/** A 4xx with a machine-readable `error` (a string), never a 5xx. */
function expectClientError(r: { status: number; body: any }, what: string) {
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBeGreaterThanOrEqual(400);
  expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBeLessThan(500);
  expect(typeof r.body?.error, what).toBe('string');
}

describe.each(NAMES)('%s', (name) => {
  it('as the proof token: refused at once, and the request still waits for a payment', async () => {
    const { api } = await svc.newKey('manual');
    const quote = await api.post('/execute', body(`proof-token-${NAMES.indexOf(name)}`));
    expect(quote.status).toBe(402);
    const proof = { request_id: quote.body.request_id, payer: paid.payer, token: name, chain: CHAIN, tx_hash: paid.txHash };
    const r = await api.post('/execute', body(`proof-token-${NAMES.indexOf(name)}`), { 'x-payment-proof': JSON.stringify(proof) });
    expectClientError(r, 'proof token');
    const status = await api.get(`/status/${quote.body.request_id}`);
    expect(status.body.status).toBe('payment_required');
  });

  it('as the proof token of a first call (before any 402): refused at once', async () => {
    const { api } = await svc.newKey('manual');
    const proof = { payer: paid.payer, token: name, chain: CHAIN, tx_hash: paid.txHash };
    const r = await api.post('/execute', body(`first-call-${NAMES.indexOf(name)}`), { 'x-payment-proof': JSON.stringify(proof) });
    expectClientError(r, 'first-call proof token');
  });

  it('as the proof chain, the request chain and a wallet query chain', async () => {
    const { api } = await svc.newKey('manual');
    const proof = { payer: paid.payer, token: 'USDC', chain: name, tx_hash: paid.txHash };
    expectClientError(await api.post('/execute', body('proof-chain'), { 'x-payment-proof': JSON.stringify(proof) }), 'proof chain');
    expectClientError(await api.post('/execute', body('request-chain', { chain: name })), 'request chain');
    expectClientError(await api.post('/simulate', body('request-chain', { chain: name })), 'simulate chain');
    expectClientError(await api.get(`/wallet?agent_id=a&chain=${encodeURIComponent(name)}`), 'wallet chain');
    expectClientError(await api.get(`/wallet/balance?agent_id=a&chain=${encodeURIComponent(name)}`), 'balance chain');
    expect(canonicalChain(name)).toBeUndefined();
  });

  it('as a protocol token symbol, a market and a slug', async () => {
    const { api } = await svc.newKey('sponsored');
    const q = encodeURIComponent(name);
    expectClientError(await api.post('/protocols/lend-b-v3/supply/simulate', { agent_id: 'p', token: name, amount: '1' }), 'lend-b-v3 token');
    expectClientError(await api.post('/protocols/lend-a-v3/supply/simulate', { agent_id: 'p', token: name, amount: '1' }), 'lend-a-v3 token');
    expectClientError(await api.get(`/protocols/lend-c/market?market=${q}`), 'lend-c market');
    expectClientError(await api.post('/protocols/lend-c/supply/simulate', { agent_id: 'p', market: name, amount: '1' }), 'lend-c market (action)');
    expectClientError(await api.get(`/protocols/lend-b-v3/position?agent_id=p&market=${q}`), 'lend-b-v3 market');
    expectClientError(await api.get(`/protocols/${q}/markets`), 'slug');
    expectClientError(await api.post(`/protocols/${q}/supply`, { agent_id: 'p' }), 'slug (action)');
    expectClientError(await api.get(`/protocols/lend-c/${q}`), 'endpoint');
  });
});
