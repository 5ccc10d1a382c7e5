/**
 * Payments in the cluster layout: the gateway (as the chart's ServiceAccount) attaches a payment to the
 * request its 402 quoted, the leading controller verifies it on chain through the chain worker and claims it
 * in a PaymentReceipt on the API server; one transaction offered to two requests at once pays for one.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { transferClaimName } from '../../src/api/v1alpha1/index.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { newPayer } from '../support/payer.ts';

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
  const { api } = await cluster.newKey('manual');
  const [a, b] = await Promise.all([api.post('/execute', body('c-a')), api.post('/execute', body('c-b'))]);
  const payer = await newPayer(cluster.devnet, CHAIN);
  // Enough for either quote, and signed by the payer for each request: what is refused below is the reuse alone.
  const tx = await payer.pay('USDC', a.body.payment_address, 100_000_000n);
  const answers = await Promise.all(
    [['c-a', a], ['c-b', b]].map(async ([agent, q]: any) =>
      api.post(
        '/execute',
        body(agent),
        proof({ payer: payer.address, tx_hash: tx, request_id: q.body.request_id, signature: await payer.signProof({ txHash: tx, requestId: q.body.request_id, agentId: agent }) }),
      ),
    ),
  );
  expect(answers.map((r) => r.status).sort()).toEqual([200, 402]);
  expect(answers.find((r) => r.status === 402)!.body.reason).toBe('tx_already_used');
});
