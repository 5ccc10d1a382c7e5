/**
 * A protocol action is part of its request (issue 17 §1): the ExecutionRequest keeps the action and the caller's
 * input, a retry or a paid resend is matched by that (never by the calls a plan derived, which a plan reading
 * changing state derives anew), the first plan's bounds hold, and a revert is decoded by the family in the status
 * record and the webhook as in the synchronous 400.
 */
import { Webhook } from 'standardwebhooks';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { FAMILIES } from '../../src/protocols/index.ts';
import { bumpWords, DEADLINE_FAMILY_KEY, deadlineFamily } from '../support/deadlineFamily.ts';
import { testDevnet } from '../support/env.ts';
import { newPayer } from '../support/payer.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { until } from '../support/until.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';

const BUMP = '/protocols/test-deadline/bump';
let svc: TestService;
let receiver: WebhookReceiver;
let counter: Address;
let ethereumCounter: Address;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  counter = testDevnet().chain('base').testContracts.counter as Address;
  ethereumCounter = testDevnet().chain('ethereum').testContracts.counter as Address;
  svc = await startTestService({
    families: [...FAMILIES, deadlineFamily],
    // The test family runs on base (its default) and ethereum: the request's chain picks the deployment.
    protocols: { base: { [DEADLINE_FAMILY_KEY]: { counter } }, ethereum: { [DEADLINE_FAMILY_KEY]: { counter: ethereumCounter } } },
    webhooks: { allowLoopback: true, ca: receiver.ca, retryScheduleSeconds: [0.05, 0.1] },
  });
});
afterAll(async () => {
  await svc?.stop();
  await receiver?.close();
});

const counterValue = () => svc.devnet.publicClient('base').readContract({ address: counter, abi: counterAbi, functionName: 'number' });
/** The chain's clock moves on: the next plan reads a later block time. */
const nextSecond = async () => {
  const before = (await svc.devnet.publicClient('base').getBlock()).timestamp;
  await until('a later block time', async () => {
    await svc.devnet.publicClient('base').request({ method: 'evm_mine' } as never);
    return (await svc.devnet.publicClient('base').getBlock()).timestamp > before ? true : undefined;
  });
};
const record = (id: string) => svc.store.get('ExecutionRequest', id);

describe('a protocol action on its request', () => {
  it('a retry with the same Idempotency-Key reaches the same request, with the bound the first plan set, though a plan now derives other calls', async () => {
    const { api } = await svc.newKey('sponsored');
    const body = { agent_id: 'deadline-retry', by: '3' };
    const before = await counterValue();
    const first = await api.post(BUMP, body, { 'idempotency-key': 'bump-once' });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const id = first.body.request_id;
    const firstRecord = await record(id);
    const deadline = firstRecord.spec.action!.input['deadline'];
    expect(firstRecord.spec.action).toMatchObject({ name: 'test-deadline/bump', input: { agent_id: 'deadline-retry', by: '3', chain: 'base', deadline_seconds: '300' } });
    expect(typeof deadline).toBe('string');

    await nextSecond();
    // What a plan derives now: another deadline, so other calls.
    const now = await api.post(`${BUMP}/simulate`, body);
    expect(now.status, JSON.stringify(now.body)).toBe(200);
    expect(now.body.calls[0].calldata).not.toBe(firstRecord.spec.calls[0]!.data);

    // The caller's key order is not part of what it asked.
    const retry = await api.post(BUMP, { by: '3', agent_id: 'deadline-retry' }, { 'idempotency-key': 'bump-once' });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.request_id).toBe(id);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const done = await api.waitForTerminal(id);
    expect(done).toMatchObject({ status: 'confirmed', action: { name: 'test-deadline/bump', input: { deadline } } });
    expect((await record(id)).spec.calls).toEqual(firstRecord.spec.calls);
    expect((await counterValue()) - before).toBe(3n);

    // Another ask under the same key is still refused.
    const other = await api.post(BUMP, { agent_id: 'deadline-retry', by: '4' }, { 'idempotency-key': 'bump-once' });
    expect(other).toMatchObject({ status: 422, body: { error: 'idempotency_key_mismatch' } });
  });

  it('the resend after a 402 pays the request the 402 named, its bound unchanged, though a plan now derives other calls; the calls signed are planned at signing', async () => {
    const { api } = await svc.newKey('manual');
    const body = { agent_id: 'deadline-paid', by: '2' };
    const before = await counterValue();
    const asked = await api.post(BUMP, body);
    expect(asked.status, JSON.stringify(asked.body)).toBe(402);
    const quote = asked.body;
    const deadline = (await record(quote.request_id)).spec.action!.input['deadline'];

    const payer = await newPayer(svc.devnet, 'base');
    const tx = await payer.pay('USDC', quote.payment_address, BigInt(quote.required_amount_raw.USDC));
    await nextSecond();
    // The spec's five fields, no request_id and no Idempotency-Key: the resend itself names the request.
    const proof = JSON.stringify({ payer: payer.address, token: 'USDC', chain: 'base', tx_hash: tx });
    const paid = await api.post(BUMP, body, { 'x-payment-proof': proof });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.request_id).toBe(quote.request_id);
    const done = await api.waitForTerminal(quote.request_id);
    expect(done).toMatchObject({ status: 'confirmed', action: { input: { deadline } } });
    expect((await counterValue()) - before).toBe(2n);
    // The family plans again at signing: the signed calls were planned after the payment, with the first deadline.
    const paidRecord = await record(quote.request_id);
    const accepted = bumpWords(paidRecord.spec.calls[0]!.data);
    const signed = bumpWords(paidRecord.status!.signedCalls![0]!.data);
    expect(signed.deadline).toBe(BigInt(deadline as string));
    expect(accepted.deadline).toBe(BigInt(deadline as string));
    expect(signed.plannedAt).toBeGreaterThan(accepted.plannedAt);
  });

  it('a retry after the first execution changed what a plan reads reaches its request; a reverted protocol action: the status record and the webhook carry the family-decoded reason, as the 400 does', async () => {
    const { api, webhookSecret } = await svc.newKey('sponsored');
    const agent = 'comet-overborrow';
    const wallet = (await api.get(`/wallet?agent_id=${agent}&chain=base`)).body.smart_wallet_address as Address;
    await (await newPayer(svc.devnet, 'base')).mint('WETH', wallet, 10n ** 18n); // a fresh account: no nonce shared
    const supply = { agent_id: agent, token: 'WETH', amount: '1' };
    const supplied = await api.post('/protocols/lend-b-v3/supply', supply, { 'idempotency-key': 'supply-once' });
    expect(supplied.status, JSON.stringify(supplied.body)).toBe(200);
    expect((await api.waitForTerminal(supplied.body.request_id)).status).toBe('confirmed');
    // The retry of a request that spent the wallet's WETH: a plan now would refuse (insufficient_balance); the
    // retry is answered from its request instead.
    expect((await api.post('/protocols/lend-b-v3/supply/simulate', supply)).body).toMatchObject({ error: 'insufficient_balance' });
    const retried = await api.post('/protocols/lend-b-v3/supply', supply, { 'idempotency-key': 'supply-once' });
    expect(retried, JSON.stringify(retried.body)).toMatchObject({ status: 200, body: { request_id: supplied.body.request_id } });
    expect(retried.headers.get('idempotent-replayed')).toBe('true');

    const hook = `${receiver.origin}/overborrow`;
    const refused = await api.post('/protocols/lend-b-v3/borrow', { agent_id: agent, amount: '20000', callback_url: hook });
    expect(refused).toMatchObject({ status: 400, body: { error: 'simulation_failed', protocol_error: { protocol: 'Compound v3', name: 'NotCollateralized' } } });
    const id = refused.body.request_id;
    const status = (await api.get(`/status/${id}`)).body;
    expect(status).toMatchObject({
      status: 'failed',
      action: { name: 'lend-b-v3/borrow', input: { amount: '20000' } },
      failure: { code: 'simulation_reverted', protocol_error: { protocol: 'Compound v3', name: 'NotCollateralized' } },
    });

    const delivery = await until('the failed event', async () => receiver.received.find((d) => d.body.includes(id)));
    const headers = Object.fromEntries(Object.entries(delivery.headers).map(([k, v]) => [k, String(v)]));
    const event = new Webhook(webhookSecret).verify(delivery.body, headers) as { data: Record<string, any> };
    expect(event.data).toEqual(status);
  });

  it("a family on more than one chain: the request's chain picks the deployment, its wallet and its chain; one it does not run on is 400", async () => {
    const { api } = await svc.newKey('sponsored');
    const read = (chain: 'base' | 'ethereum', address: Address) =>
      svc.devnet.publicClient(chain).readContract({ address, abi: counterAbi, functionName: 'number' });
    const [onBase, onEthereum] = [await read('base', counter), await read('ethereum', ethereumCounter)];
    const asked = await api.post(BUMP, { agent_id: 'two-chains', by: '5', chain: 'ETH' }, { 'idempotency-key': 'bump-eth' });
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    const done = await api.waitForTerminal(asked.body.request_id);
    expect(done).toMatchObject({ status: 'confirmed', chain: 'ethereum', action: { name: 'test-deadline/bump', input: { chain: 'ethereum' } } });
    expect(await read('ethereum', ethereumCounter)).toBe(onEthereum + 5n);
    expect(await read('base', counter)).toBe(onBase);
    // The same key and agent on the default chain is another ask: the Idempotency-Key refuses it.
    expect((await api.post(BUMP, { agent_id: 'two-chains', by: '5' }, { 'idempotency-key': 'bump-eth' })).body).toMatchObject({ error: 'idempotency_key_mismatch' });
    expect(await api.post(BUMP, { agent_id: 'two-chains', by: '5', chain: 'arbitrum' })).toMatchObject({ status: 400, body: { error: 'unsupported_chain' } });
  });
});
