/**
 * A request waiting for its payment follows its key (src/controller/execution/keyChange.ts), at once: the
 * execution controller watches ApiClients and maps a key's change to its waiting requests through an index.
 * Quotes live 10 minutes (and a minute's grace after), so a request's own timer cannot explain what happens here:
 * each test asserts the request moved before its quote expired.
 */
import { encodeFunctionData, parseAbi } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { ExecutionRequest } from '../../src/api/v1alpha1/index.ts';
import { revokeKey, setKeyMode } from '../../src/keys/manage.ts';
import { newPayer } from '../support/payer.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { until } from '../support/until.ts';

const CHAIN = 'base';
const INCREMENT = encodeFunctionData({ abi: parseAbi(['function increment()']), functionName: 'increment' });

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ payments: { x402SettlerKey: undefined } });
});
afterAll(async () => {
  await svc?.stop();
});

const body = (agent: string) => ({ agent_id: agent, chain: CHAIN, target_contract: svc.devnet.chain(CHAIN).testContracts.counter, calldata: INCREMENT });
const stored = (id: string) => svc.store.get('ExecutionRequest', id);
/** The stored request once `pred` holds for it. */
const storedWhen = (id: string, what: string, pred: (r: ExecutionRequest) => boolean) =>
  until(what, async () => {
    const r = await stored(id);
    return pred(r) ? r : undefined;
  }, 30_000, 50);
/** Asserts the request's status moved at `at`, before its (first) quote expired: its own timer had not fired. */
const beforeExpiry = (at: string | undefined, quoteExpiresAt: string) => expect(Date.parse(at!)).toBeLessThan(Date.parse(quoteExpiresAt));

it('revoking a key fails its request waiting for a payment with key_revoked, before the quote expires', async () => {
  const { api, clientId } = await svc.newKey('manual');
  const quote = await api.post('/execute', body('revoke-1'));
  expect(quote.status).toBe(402);
  const waiting = await stored(quote.body.request_id);
  expect(waiting.status?.phase).toBe('PaymentRequired');
  const expiresAt = waiting.status!.payment!.quote!.expiresAt;

  await revokeKey(svc.store, clientId);
  const failed = await storedWhen(quote.body.request_id, 'the request to fail', (r) => r.status?.phase === 'Failed');
  expect(failed.status?.failure?.code).toBe('key_revoked');
  expect(failed.status?.conditions?.find((c) => c.type === 'Succeeded')).toMatchObject({ status: 'False', reason: 'KeyRevoked' });
  beforeExpiry(failed.status?.completionTime, expiresAt);
  expect(failed.status?.userOperation).toBeUndefined(); // nothing was signed
});

it('a manual request waiting for its payment proceeds without one when its key becomes sponsored', async () => {
  const { api, clientId } = await svc.newKey('manual');
  const quote = await api.post('/execute', body('sponsor-1'));
  expect(quote.status).toBe(402);
  const expiresAt = (await stored(quote.body.request_id)).status!.payment!.quote!.expiresAt;

  await setKeyMode(svc.store, clientId, 'sponsored'); // agent-wallet keys set-mode
  const done = await api.waitForTerminal(quote.body.request_id, 30_000);
  expect(done).toMatchObject({ status: 'confirmed', cost_usd: 0 });
  const r = await stored(quote.body.request_id);
  expect(r.spec.paymentMode).toBe('sponsored'); // it follows its key
  expect(r.status?.payment?.paid).toBeUndefined();
  beforeExpiry(r.status?.queuedTime, expiresAt);
});

it('an auto request waiting for its payment is quoted again when its key becomes manual, and the new quote pays', async () => {
  // A wallet with no tokens: the auto mode cannot take its fee and answers 402 (pay by hand).
  const { api, clientId } = await svc.newKey('auto');
  const first = await api.post('/execute', body('requote-1'));
  expect(first.status).toBe(402);
  const id = first.body.request_id;
  const before = (await stored(id)).status!.payment!.quote!;
  expect(before.feeUsd).toBe(0); // auto: gas only

  await setKeyMode(svc.store, clientId, 'manual');
  const requoted = await storedWhen(
    id,
    'the request quoted under manual',
    (r) => r.spec.paymentMode === 'manual' && r.status?.observedGeneration === r.metadata.generation && r.status?.payment?.quote?.expiresAt !== before.expiresAt,
  );
  expect(requoted.status?.phase).toBe('PaymentRequired');
  const quote = requoted.status!.payment!.quote!;
  expect(quote.feeUsd).toBeGreaterThan(0); // manual: gas plus the platform fee
  expect(requoted.status?.payment?.earlierQuotes?.map((q) => q.expiresAt)).toContain(before.expiresAt); // still held: still pays
  // Quotes live 600 s (the default): the new one was made before the first expired.
  beforeExpiry(new Date(Date.parse(quote.expiresAt) - 600_000).toISOString(), before.expiresAt);

  const payer = await newPayer(svc.devnet, CHAIN);
  const usdc = quote.tokens.find((t) => t.symbol === 'USDC')!;
  const tx = await payer.pay('USDC', quote.recipient as `0x${string}`, BigInt(usdc.amountRaw));
  const paid = await api.post('/execute', body('requote-1'), {
    'x-payment-proof': JSON.stringify({ payer: payer.address, token: 'USDC', chain: CHAIN, tx_hash: tx, request_id: id }),
  });
  expect(paid.status).toBe(200);
  expect((await api.waitForTerminal(id, 30_000)).status).toBe('confirmed');
});
