/**
 * Payments in the cluster layout: the gateway (as the chart's ServiceAccount) attaches a payment to the
 * request its 402 quoted, the leading controller verifies it on chain through the chain worker and claims it
 * in a PaymentReceipt on the API server; one transaction offered to two requests at once pays for one; a
 * front-runner cannot take a victim's transfer, and an auto-mode bundle's fee pays nothing else (the executors,
 * asked over gRPC, and the operation's claim on the API server); revoking a key fails its request waiting for a
 * payment at once, and a key made sponsored lets it proceed unpaid (the leading controller watches ApiClients on
 * the API server, and writes the request's new mode there).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { transferClaimName } from '../../src/api/v1alpha1/index.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { revokeKey } from '../../src/keys/manage.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { newPayer } from '../support/payer.ts';
import { until } from '../support/until.ts';

const CHAIN = 'base';
let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.stop();
});

const body = (agent: string) => ({
  agent_id: agent,
  chain: CHAIN,
  target_contract: cluster.devnet.chain(CHAIN).testContracts.counter,
  calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
});
const proof = (p: { payer: string; tx_hash: string; request_id: string; signature?: string }) => ({
  'x-payment-proof': JSON.stringify({ ...p, token: 'USDC', chain: CHAIN }),
});

it('402, an on-chain payment, the same request with X-Payment-Proof: queued, confirmed, claimed once', async () => {
  const { api } = await cluster.newKey('manual');
  const quote = (await api.post('/execute', body('c-pay'))).body;
  expect(quote).toMatchObject({ error: 'payment_required', chain: CHAIN });
  const payer = await newPayer(cluster.devnet, CHAIN);
  const tx = await payer.pay('USDC', quote.payment_address, BigInt(quote.required_amount_raw.USDC));
  const paid = await api.post('/execute', body('c-pay'), proof({ payer: payer.address, tx_hash: tx, request_id: quote.request_id }));
  expect(paid.status).toBe(200);
  expect((await api.waitForTerminal(quote.request_id, 60_000)).status).toBe('confirmed');
  const receipt = await cluster.store.get('PaymentReceipt', transferClaimName(CHAIN, tx, 0));
  expect(receipt.spec.requestId).toBe(quote.request_id);
});

it('one transaction offered to two requests at once pays for exactly one', async () => {
  const { api, clientId } = await cluster.newKey('manual');
  const [a, b] = await Promise.all([api.post('/execute', body('c-a')), api.post('/execute', body('c-b'))]);
  const payer = await newPayer(cluster.devnet, CHAIN);
  // Enough for either quote, and signed by the payer for each request: what is refused below is the reuse alone.
  const tx = await payer.pay('USDC', a.body.payment_address, 100_000_000n);
  const answers = await Promise.all(
    [['c-a', a], ['c-b', b]].map(async ([agent, q]: any) =>
      api.post(
        '/execute',
        body(agent),
        proof({ payer: payer.address, tx_hash: tx, request_id: q.body.request_id, signature: await payer.signProof({ txHash: tx, client: clientId, requestId: q.body.request_id }) }),
      ),
    ),
  );
  expect(answers.map((r) => r.status).sort()).toEqual([200, 402]);
  expect(answers.find((r) => r.status === 402)!.body.reason).toBe('tx_already_used');
});

it('a front-runner presenting a victim’s transfer is refused (the quote-unique amount); the victim’s request is paid', async () => {
  const victim = await cluster.newKey('manual');
  const attacker = await cluster.newKey('manual');
  const quote = (await victim.api.post('/execute', body('c-victim'))).body;
  const theirs = (await attacker.api.post('/execute', body('c-attacker'))).body;
  expect(theirs.required_amount_raw.USDC).not.toBe(quote.required_amount_raw.USDC);
  const payer = await newPayer(cluster.devnet, CHAIN);
  const tx = await payer.pay('USDC', quote.payment_address, BigInt(quote.required_amount_raw.USDC));
  const stolen = await attacker.api.post('/execute', body('c-attacker'), proof({ payer: payer.address, tx_hash: tx, request_id: theirs.request_id }));
  expect(stolen.status).toBe(402);
  expect(stolen.body.reason).toMatch(/^amount_(mismatch|insufficient)$/);
  const paid = await victim.api.post('/execute', body('c-victim'), proof({ payer: payer.address, tx_hash: tx, request_id: quote.request_id }));
  expect(paid.status).toBe(200);
});

it('an auto-mode bundle’s fee presented as a proof is tx_already_used', async () => {
  const { api } = await cluster.newKey('auto');
  const wallet = (await api.get(`/wallet?agent_id=c-auto&chain=${CHAIN}`)).body.smart_wallet_address;
  await (await newPayer(cluster.devnet, CHAIN)).mint('USDC', wallet, 100_000_000n);
  const ran = await api.post('/execute', body('c-auto'));
  expect(ran.status).toBe(200);
  const done = await api.waitForTerminal(ran.body.request_id, 60_000);
  const attacker = await cluster.newKey('manual');
  const theirs = (await attacker.api.post('/execute', body('c-auto-thief'))).body;
  const r = await attacker.api.post('/execute', body('c-auto-thief'), proof({ payer: wallet, tx_hash: done.tx_hash, request_id: theirs.request_id }));
  expect(r.status).toBe(402);
  expect(r.body.reason).toBe('tx_already_used');
});

it('revoking a key fails its request waiting for a payment with key_revoked, before its quote expires', async () => {
  const { api, clientId } = await cluster.newKey('manual');
  const quote = await api.post('/execute', body('c-revoked'));
  expect(quote.status).toBe(402);
  const id = quote.body.request_id;
  const expiresAt = (await cluster.store.get('ExecutionRequest', id)).status!.payment!.quote!.expiresAt;
  await revokeKey(cluster.store, clientId, cluster.namespace);
  const failed = await until('the request to fail', async () => {
    const r = await cluster.store.get('ExecutionRequest', id);
    return r.status?.phase === 'Failed' ? r : undefined;
  }, 30_000);
  expect(failed.status?.failure?.code).toBe('key_revoked');
  // Quotes live 10 minutes: its own re-check (at the expiry plus the grace) cannot have moved it.
  expect(Date.parse(failed.status!.completionTime!)).toBeLessThan(Date.parse(expiresAt));
  expect((await api.get(`/status/${id}`)).status).toBe(401); // the key no longer reads it
});

it('a manual request waiting for its payment proceeds unpaid once its key becomes sponsored', async () => {
  const { api, clientId } = await cluster.newKey('manual');
  const quote = await api.post('/execute', body('c-sponsored'));
  expect(quote.status).toBe(402);
  const id = quote.body.request_id;
  const expiresAt = (await cluster.store.get('ExecutionRequest', id)).status!.payment!.quote!.expiresAt;
  const key = await cluster.store.get('ApiClient', clientId);
  await cluster.store.update({ ...key, spec: { ...key.spec, paymentMode: 'sponsored' } }); // as kubectl patch would
  expect(await api.waitForTerminal(id, 60_000)).toMatchObject({ status: 'confirmed', cost_usd: 0 });
  const done = await cluster.store.get('ExecutionRequest', id);
  expect(done.spec.paymentMode).toBe('sponsored');
  expect(Date.parse(done.status!.queuedTime!)).toBeLessThan(Date.parse(expiresAt));
});
