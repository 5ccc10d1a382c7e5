/**
 * USD and outflow rules through the service, the same in both layouts: a key-level policy that rejects an execution
 * worth more than 100 USD refuses a 150 USDC transfer with 403 policy_denied naming the rule and the figures (the
 * controller's decision: the gateway cannot value outflows), accepts a 40 USDC one, and fails closed on a transfer of
 * a token the chain does not price (aUSD); the dry-run judges the same and answers with the valuation.
 */
import { encodeFunctionData, erc20Abi, type Address } from 'viem';
import { expect } from 'vitest';
import { API_VERSION, type AgentPolicySpec } from '../../../src/api/v1alpha1/index.ts';
import { newPayer } from '../payer.ts';
import type { ScenarioService } from '../service.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers read loosely in tests

export async function policyUsdScenario(svc: ScenarioService): Promise<void> {
  // Ethereum: USDC priced by Aave's reserve feed (1 USD), which no test moves; aUSD is priced nowhere.
  const chain = 'ethereum';
  const tag = Date.now().toString(36);
  const bot = `usd-bot-${tag}`;
  const token = (symbol: string) => svc.devnet.chain(chain).tokens.find((t) => t.symbol === symbol)!.address as Address;
  const usdc = token('USDC');
  const aUsd = token('aUSD');
  const stranger = '0x000000000000000000000000000000000000dEaD';
  const transfer = (t: Address, amount: bigint) => ({
    agent_id: bot,
    chain,
    target_contract: t,
    calldata: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [stranger, amount] }),
    value: '0',
  });
  const { api, clientId } = await svc.newKey('sponsored');
  const namespace = (await svc.store.get('ApiClient', clientId)).metadata.namespace;
  const made = async () => (await svc.store.list('ExecutionRequest')).items.filter((r) => r.spec.apiClient === clientId);

  // The agent's wallet holds 500 USDC and 10 aUSD: every transfer below would succeed but for the policy.
  const wallet = (await api.get(`/wallet?agent_id=${bot}&chain=${chain}`)).body.smart_wallet_address as Address;
  const payer = await newPayer(svc.devnet, chain);
  await payer.mint('USDC', wallet, 500_000_000n);
  await payer.mint('aUSD', wallet, 10_000_000n);

  const spec: AgentPolicySpec = {
    apiClient: clientId,
    suspended: false,
    rules: [
      { name: 'anything', action: 'accept' },
      { name: 'max-100-usd', action: 'reject', usd: { gt: '100' } },
    ],
  };
  await svc.store.create({ apiVersion: API_VERSION, kind: 'AgentPolicy', metadata: { name: `${clientId}-usd`, namespace }, spec });
  const over = transfer(usdc, 150_000_000n);
  await expect.poll(async () => (await api.post('/policy/evaluate', over)).body.decision, { timeout: 10_000, interval: 50 }).toBe('deny');

  // The dry-run simulates, values and names the figures.
  const dry = await api.post('/policy/evaluate', over);
  expect(dry.body).toMatchObject({ decision: 'deny', error: 'policy_denied', policy: `${clientId}-usd`, rule: 'max-100-usd' });
  expect(dry.body.valuation).toMatchObject({ outflows_known: true, total_usd: '150', unbounded: false });
  expect(dry.body.valuation.lines).toEqual([
    { what: 'outflow', asset: usdc, amount: '150000000', to: stranger, call_index: 0, usd: '150', unbounded: false, unpriced: null },
  ]);

  // Over the limit: 403 naming the rule and the figures, decided by the controller, nothing signed.
  const refused = await api.post('/execute', over);
  expect([refused.status, refused.body.error, refused.body.policy, refused.body.rule]).toEqual([403, 'policy_denied', `${clientId}-usd`, 'max-100-usd']);
  expect(refused.body.message).toContain('this execution 150 USD; the rule: gt 100 USD');
  const created = (await made()).filter((r) => r.spec.calls[0]?.data === over.calldata);
  expect(created.map((r) => [r.status?.phase, r.status?.failure?.code, r.status?.userOperation])).toEqual([['Failed', 'policy_denied', undefined]]);

  // Under it: executed, and the USDC really left.
  const ok = await api.post('/execute', transfer(usdc, 40_000_000n));
  expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  expect((await api.waitForTerminal(ok.body.request_id, 60_000)).status).toBe('confirmed');
  const left = await svc.devnet.publicClient(chain).readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] });
  expect(left).toBe(460_000_000n);

  // A token without a price: the execution cannot be valued, so the USD rule refuses it (fail closed), naming it.
  const odd = await api.post('/execute', transfer(aUsd, 1_000_000n));
  expect([odd.status, odd.body.error, odd.body.rule]).toEqual([403, 'policy_denied', 'max-100-usd']);
  expect(odd.body.message).toContain(`token ${aUsd} is unpriced`);
  const oddDry: Json = (await api.post('/policy/evaluate', transfer(aUsd, 1_000_000n))).body;
  expect(oddDry.valuation).toMatchObject({ total_usd: null, lines: [{ asset: aUsd, usd: null, unpriced: 'no price is configured for it on this chain' }] });
}

/**
 * A USD rule added while a request waits for its payment: admission valued nothing (no rule needed it), so when the
 * payment comes the controller simulates the calls again with their outflows, values them, and refuses before
 * signing; the payment stays the caller's as a credit.
 */
export async function policyUsdAtSigningScenario(svc: ScenarioService): Promise<void> {
  const chain = 'ethereum';
  const tag = Date.now().toString(36);
  const bot = `usd-paid-${tag}`;
  const usdc = svc.devnet.chain(chain).tokens.find((t) => t.symbol === 'USDC')!.address as Address;
  const stranger = '0x000000000000000000000000000000000000dEaD';
  const body = { agent_id: bot, chain, target_contract: usdc, calldata: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [stranger, 150_000_000n] }), value: '0' };
  const { api, clientId } = await svc.newKey('manual');
  const namespace = (await svc.store.get('ApiClient', clientId)).metadata.namespace;
  const wallet = (await api.get(`/wallet?agent_id=${bot}&chain=${chain}`)).body.smart_wallet_address as Address;
  const payer = await newPayer(svc.devnet, chain);
  await payer.mint('USDC', wallet, 500_000_000n);

  const name = `${clientId}-usd-later`;
  await svc.store.create({ apiVersion: API_VERSION, kind: 'AgentPolicy', metadata: { name, namespace }, spec: { apiClient: clientId, suspended: false, rules: [{ name: 'anything', action: 'accept' }] } });
  await expect.poll(async () => (await api.post('/policy/evaluate', body)).body.policies.length, { timeout: 10_000, interval: 50 }).toBe(1);
  const asked = await api.post('/execute', body, { 'idempotency-key': `usd-paid-${tag}` });
  expect(asked.status, JSON.stringify(asked.body)).toBe(402);

  const p = await svc.store.get('AgentPolicy', name);
  await svc.store.update({ ...p, spec: { ...p.spec, rules: [...p.spec.rules, { name: 'max-100-usd', action: 'reject', usd: { gt: '100' } }] } });
  await expect.poll(async () => (await api.post('/policy/evaluate', body)).body.rule, { timeout: 10_000, interval: 50 }).toBe('max-100-usd');
  const paidTx = await payer.pay('USDC', asked.body.payment_address, BigInt(asked.body.required_amount_raw.USDC));
  const paid = await api.post('/execute', body, {
    'idempotency-key': `usd-paid-${tag}`,
    'x-payment-proof': JSON.stringify({ chain, payer: payer.address, token: 'USDC', tx_hash: paidTx, request_id: asked.body.request_id }),
  });
  expect([paid.status, paid.body.error, paid.body.rule]).toEqual([403, 'policy_denied', 'max-100-usd']);
  expect(paid.body.message).toContain('this execution 150 USD');
  const refused = await api.waitForTerminal(asked.body.request_id, 30_000);
  expect(refused).toMatchObject({ status: 'failed', tx_hash: null, failure: { code: 'policy_denied', policy: { name, rule: 'max-100-usd' } } });
  expect(refused.credit).toMatchObject({ amount_usd: asked.body.amount_usd, used_by: null });
  const left = await svc.devnet.publicClient(chain).readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] });
  expect(left).toBe(500_000_000n);
}
