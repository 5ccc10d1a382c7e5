/**
 * Per-agent policies, the same in both layouts: an operator's AgentPolicies (written on the store: the admin socket,
 * the CLI and `--kube` all end there) accept and refuse an agent's requests with 403 policy_denied naming the rule,
 * nothing created or paid; the key-level policy bounds the agent's; the controller decides on its own cache; the
 * kill switch refuses new requests and fails one waiting for a payment; a change applies to the next request; an
 * API key reads and dry-runs its policies and cannot write one.
 */
import { encodeFunctionData, erc20Abi, maxUint256, type Address } from 'viem';
import { expect } from 'vitest';
import { API_VERSION, type AgentPolicy, type AgentPolicySpec, type ExecutionRequest } from '../../../src/api/v1alpha1/index.ts';
import { counterAbi } from '../../../src/devnet/contracts.ts';
import { newPayer } from '../payer.ts';
import type { ScenarioService } from '../service.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers read loosely in tests

export async function policiesScenario(svc: ScenarioService): Promise<void> {
  const chain = 'base';
  const tag = Date.now().toString(36);
  const bot = `pol-bot-${tag}`;
  const other = `pol-other-${tag}`;
  const { counter } = svc.devnet.chain(chain).testContracts;
  const usdc = svc.devnet.chain(chain).tokens.find((t) => t.symbol === 'USDC')!.address as Address;
  const stranger = '0x000000000000000000000000000000000000dEaD';
  const increment = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
  const call = (agent: string, target: string, calldata: string, on = chain) => ({ agent_id: agent, chain: on, target_contract: target, calldata, value: '0' });
  const { api, clientId } = await svc.newKey('sponsored');
  // The service's namespace (each cluster test file has its own), as its key's.
  const namespace = (await svc.store.get('ApiClient', clientId)).metadata.namespace;
  const made = async () => (await svc.store.list('ExecutionRequest')).items.filter((r) => r.spec.apiClient === clientId);

  const apply = async (name: string, spec: Omit<AgentPolicySpec, 'apiClient' | 'suspended'> & { suspended?: boolean }): Promise<AgentPolicy> => {
    const full = { apiClient: clientId, suspended: false, ...spec };
    try {
      const current = await svc.store.get('AgentPolicy', name);
      return await svc.store.update({ ...current, spec: full });
    } catch {
      return svc.store.create({ apiVersion: API_VERSION, kind: 'AgentPolicy', metadata: { name, namespace }, spec: full });
    }
  };
  // The gateway's and the controller's caches follow a write through their watches: wait until the dry-run agrees.
  const settled = async (body: Json, decision: 'allow' | 'deny') =>
    expect.poll(async () => (await api.post('/policy/evaluate', body)).body.decision, { timeout: 10_000, interval: 50 }).toBe(decision);

  // The key-level policy: the counter on base, and no allowance to anyone; it bounds every agent of the key.
  await apply(`${clientId}-key`, {
    rules: [
      { name: 'counter-on-base', action: 'accept', chains: ['base'], targets: [counter] },
      { name: 'usdc', action: 'accept', targets: [usdc] },
      { name: 'no-foreign-approvals', action: 'reject', approval: { spendersNot: [counter] } },
    ],
  });
  // The bot's own: increment only (the key's policy still applies to it).
  await apply(`${clientId}-bot`, {
    agents: { match: 'exact', agentId: bot },
    rules: [{ name: 'increment-only', action: 'accept', function: { signature: 'increment()' } }],
  });
  await settled(call(bot, usdc, encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [stranger, 1n] })), 'deny');

  // Accepted by both: executed to confirmed; the dry-run names what accepted it.
  const dry = await api.post('/policy/evaluate', call(bot, counter, increment));
  expect(dry.status).toBe(200);
  expect(dry.body).toMatchObject({ decision: 'allow', error: null, policies: [`${clientId}-key`, `${clientId}-bot`] });
  expect(dry.body.accepted).toEqual([
    { policy: `${clientId}-key`, call_index: 0, rule: 'counter-on-base' },
    { policy: `${clientId}-bot`, call_index: 0, rule: 'increment-only' },
  ]);
  const ok = await api.post('/execute', call(bot, counter, increment));
  expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  expect((await api.waitForTerminal(ok.body.request_id, 60_000)).status).toBe('confirmed');

  // Refused, each with the policy and rule, and nothing created for any of them.
  const before = (await made()).length;
  const refusals: [string, Json, { policy: string; rule: string | null }][] = [
    // The bot's policy accepts a USDC transfer nowhere; the key's alone would.
    ['not increment', call(bot, usdc, encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [stranger, 1n] })), { policy: `${clientId}-bot`, rule: null }],
    // The key-level policy bounds the bot's: the same call on another chain.
    ['another chain', call(bot, counter, increment, 'arbitrum'), { policy: `${clientId}-key`, rule: null }],
    // approve(stranger, max): a reject wins over the key's accept of USDC.
    ['an unlimited approval', call(other, usdc, encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [stranger, maxUint256] })), { policy: `${clientId}-key`, rule: 'no-foreign-approvals' }],
  ];
  for (const [what, body, by] of refusals) {
    const r = await api.post('/execute', body);
    expect([what, r.status, r.body.error, r.body.policy, r.body.rule]).toEqual([what, 403, 'policy_denied', by.policy, by.rule]);
    const d = await api.post('/policy/evaluate', body);
    expect([what, d.body.decision, d.body.policy, d.body.rule]).toEqual([what, 'deny', by.policy, by.rule]);
  }
  expect((await made()).length).toBe(before);
  // Another agent of the key: only the key-level policy applies.
  const otherOk = await api.post('/execute', call(other, counter, increment));
  expect(otherOk.status, JSON.stringify(otherOk.body)).toBe(200);

  // The controller decides on its own: a request created past the gateway (as one racing a policy change would be)
  // fails with the policy's refusal, nothing signed.
  const raced = await svc.store.create({
    apiVersion: API_VERSION,
    kind: 'ExecutionRequest',
    metadata: { name: `req-raced-${tag}`, namespace },
    spec: { apiClient: clientId, agentId: bot, chain, calls: [{ target: usdc, value: '0', data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [stranger, maxUint256] }) }], batch: false, paymentMode: 'sponsored' },
  } as ExecutionRequest);
  await expect.poll(async () => (await svc.store.get('ExecutionRequest', raced.metadata.name)).status?.phase, { timeout: 30_000, interval: 100 }).toBe('Failed');
  const failed = await svc.store.get('ExecutionRequest', raced.metadata.name);
  expect(failed.status?.failure).toMatchObject({ code: 'policy_denied', policy: { name: `${clientId}-key`, rule: 'no-foreign-approvals' } });
  expect(failed.status?.userOperation).toBeUndefined();
  expect(failed.status?.conditions?.find((c) => c.type === 'PolicyAllowed')).toMatchObject({ status: 'False', reason: 'PolicyDenied' });

  // The policies the key can read for its agent, in the order they are judged.
  const read = await api.get(`/policy?agent_id=${bot}`);
  expect(read.status).toBe(200);
  expect(read.body.policies.map((p: Json) => [p.name, p.applies_to])).toEqual([
    [`${clientId}-key`, null],
    [`${clientId}-bot`, { match: 'exact', agent_id: bot }],
  ]);

  // The kill switch: the bot is refused with agent_suspended; the key's other agents go on.
  await apply(`${clientId}-bot`, { agents: { match: 'exact', agentId: bot }, suspended: true, rules: [{ name: 'increment-only', action: 'accept', function: { signature: 'increment()' } }] });
  await settled(call(bot, counter, increment), 'deny');
  const stopped = await api.post('/execute', call(bot, counter, increment));
  expect([stopped.status, stopped.body.error, stopped.body.policy]).toEqual([403, 'agent_suspended', `${clientId}-bot`]);
  expect((await api.post('/execute', call(other, counter, increment))).status).toBe(200);
  // Resumed: the next request goes through.
  await apply(`${clientId}-bot`, { agents: { match: 'exact', agentId: bot }, rules: [{ name: 'increment-only', action: 'accept', function: { signature: 'increment()' } }] });
  await settled(call(bot, counter, increment), 'allow');
  expect((await api.post('/execute', call(bot, counter, increment))).status).toBe(200);

  // A request waiting for its payment fails once its agent is suspended: nothing will be signed for it.
  const manual = await svc.newKey('manual');
  const waiter = `pol-waiter-${tag}`;
  await svc.store.create({
    apiVersion: API_VERSION,
    kind: 'AgentPolicy',
    metadata: { name: `${manual.clientId}-all`, namespace },
    spec: { apiClient: manual.clientId, suspended: false, rules: [{ name: 'anything', action: 'accept' }] },
  });
  await expect.poll(async () => (await manual.api.post('/policy/evaluate', call(waiter, counter, increment))).body.policies.length, { timeout: 10_000, interval: 50 }).toBe(1);
  const quoted = await manual.api.post('/execute', call(waiter, counter, increment));
  expect(quoted.status, JSON.stringify(quoted.body)).toBe(402);
  const p = await svc.store.get('AgentPolicy', `${manual.clientId}-all`);
  await svc.store.update({ ...p, spec: { ...p.spec, suspended: true } });
  const waited = await manual.api.waitForTerminal(quoted.body.request_id, 30_000);
  expect([waited.status, waited.failure?.code, waited.failure?.policy]).toEqual(['failed', 'agent_suspended', { name: `${manual.clientId}-all`, rule: null }]);

  // A policy tightened while a request waits for its payment: paid, it is judged again before signing and refused,
  // nothing executed, the payment kept as a credit.
  const payee = await svc.newKey('manual');
  await svc.store.create({
    apiVersion: API_VERSION,
    kind: 'AgentPolicy',
    metadata: { name: `${payee.clientId}-counter`, namespace },
    spec: { apiClient: payee.clientId, suspended: false, rules: [{ name: 'counter', action: 'accept', targets: [counter] }] },
  });
  await expect.poll(async () => (await payee.api.get(`/policy?agent_id=${bot}`)).body.policies.length, { timeout: 10_000, interval: 50 }).toBe(1);
  const asked = await payee.api.post('/execute', call(bot, counter, increment), { 'idempotency-key': `paid-${tag}` });
  expect(asked.status, JSON.stringify(asked.body)).toBe(402);
  const tightened = await svc.store.get('AgentPolicy', `${payee.clientId}-counter`);
  await svc.store.update({ ...tightened, spec: { ...tightened.spec, rules: [{ name: 'no-counter', action: 'reject', targets: [counter] }, { name: 'rest', action: 'accept' }] } });
  await expect.poll(async () => (await payee.api.post('/policy/evaluate', call(bot, counter, increment))).body.rule, { timeout: 10_000, interval: 50 }).toBe('no-counter');
  const payer = await newPayer(svc.devnet, chain);
  const paidTx = await payer.pay('USDC', asked.body.payment_address, BigInt(asked.body.required_amount_raw.USDC));
  const paid = await payee.api.post('/execute', call(bot, counter, increment), {
    'idempotency-key': `paid-${tag}`,
    'x-payment-proof': JSON.stringify({ chain, payer: payer.address, token: 'USDC', tx_hash: paidTx, request_id: asked.body.request_id }),
  });
  expect([paid.status, paid.body.error, paid.body.rule]).toEqual([403, 'policy_denied', 'no-counter']);
  const refusedPaid = await payee.api.waitForTerminal(asked.body.request_id, 30_000);
  expect(refusedPaid).toMatchObject({ status: 'failed', tx_hash: null, failure: { code: 'policy_denied', policy: { name: `${payee.clientId}-counter`, rule: 'no-counter' } } });
  expect(refusedPaid.credit).toMatchObject({ amount_usd: asked.body.amount_usd, used_by: null });

  // A call to the agent's own wallet (its upgrade, its deposit) is accepted only by a rule that names the wallet: a
  // rule without targets does not open it.
  const loose = await svc.newKey('sponsored');
  await svc.store.create({
    apiVersion: API_VERSION,
    kind: 'AgentPolicy',
    metadata: { name: `${loose.clientId}-small`, namespace },
    spec: { apiClient: loose.clientId, suspended: false, rules: [{ name: 'small-values', action: 'accept', value: { lte: '10000000000000000' } }] },
  });
  const own = (await loose.api.get(`/wallet?agent_id=${bot}&chain=${chain}`)).body.smart_wallet_address as string;
  await expect.poll(async () => (await loose.api.post('/policy/evaluate', call(bot, own, '0x'))).body.reason, { timeout: 10_000, interval: 50 }).toMatch(/own wallet/);
  const selfCall = await loose.api.post('/execute', call(bot, own, '0x'));
  expect([selfCall.status, selfCall.body.error, selfCall.body.policy, selfCall.body.rule]).toEqual([403, 'policy_denied', `${loose.clientId}-small`, null]);
  expect((await loose.api.post('/execute', call(bot, counter, increment))).status).toBe(200);

  // A protocol action is judged by its name and normalized input: a supply over the bound is refused before planning
  // anything is queued; the family's other actions are accepted by no rule.
  const lender = await svc.newKey('sponsored');
  await svc.store.create({
    apiVersion: API_VERSION,
    kind: 'AgentPolicy',
    metadata: { name: `${lender.clientId}-lend`, namespace },
    spec: { apiClient: lender.clientId, suspended: false, rules: [{ name: 'small-supplies', action: 'accept', protocol: { actions: ['lend-a-v3/supply'], input: [{ field: 'amount', lte: '1' }] } }] },
  });
  await expect.poll(async () => (await lender.api.get(`/policy?agent_id=${bot}`)).body.policies.length, { timeout: 10_000, interval: 50 }).toBe(1);
  const big = await lender.api.post('/protocols/lend-a-v3/supply', { agent_id: bot, token: 'WETH', amount: '2' });
  expect([big.status, big.body.error, big.body.policy, big.body.rule]).toEqual([403, 'policy_denied', `${lender.clientId}-lend`, null]);
  const borrow = await lender.api.post('/protocols/lend-a-v3/borrow', { agent_id: bot, token: 'USDC', amount: '1' });
  expect([borrow.status, borrow.body.error]).toEqual([403, 'policy_denied']);
  expect((await svc.store.list('ExecutionRequest')).items.filter((r) => r.spec.apiClient === lender.clientId)).toEqual([]);

  // An API key cannot write a policy: no route takes one (405 where only a read is served).
  for (const path of ['/policy', `/policy/${clientId}-bot`, '/policies']) {
    const r = await api.post(path, { apiClient: clientId, rules: [{ name: 'all', action: 'accept' }] });
    expect([path, [404, 405].includes(r.status)]).toEqual([path, true]);
  }
  expect((await svc.store.get('AgentPolicy', `${clientId}-bot`)).spec.rules).toHaveLength(1);
}
