/**
 * Budgets, the same in both layouts: 50 executes at once against a key-level budget that fits 10 — at most 10 and
 * at least 9 are broadcast, every other one is refused 403 policy_denied naming the budget with nothing created
 * on chain, and the spend the policy records equals what the chain's receipts say the broadcast ones cost; a USD
 * budget smaller than one execution refuses it with the figures; token outflows count in a USD budget at their
 * price (USDC by the devnet's oracle), and an unpriced token's fails closed; an allowance at its amount, an
 * unlimited one refused.
 */
import { encodeFunctionData, erc20Abi, maxUint256, parseAbiItem, parseEventLogs, type Address, type Hex, type PublicClient } from 'viem';
import { expect } from 'vitest';
import { API_VERSION, type AgentPolicy, type AgentPolicySpec } from '../../../src/api/v1alpha1/index.ts';
import { counterAbi } from '../../../src/devnet/contracts.ts';
import { formatMicroUsd, weiToMicroUsd } from '../../../src/policy/usd.ts';
import { usdToMicro } from '../../../src/payments/pricing.ts';
import { newPayer } from '../payer.ts';
import type { ScenarioService } from '../service.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers read loosely in tests

const USER_OPERATION_EVENT = parseAbiItem(
  'event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)',
);

export async function budgetsScenario(svc: ScenarioService): Promise<void> {
  const chain = 'base';
  const tag = Date.now().toString(36);
  const config = svc.devnet.chainConfigs().find((c) => c.name === chain)!;
  const { counter } = svc.devnet.chain(chain).testContracts;
  const increment = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
  const call = (agent: string) => ({ agent_id: agent, chain, target_contract: counter, calldata: increment, value: '0' });
  const { api, clientId } = await svc.newKey('sponsored');
  const namespace = (await svc.store.get('ApiClient', clientId)).metadata.namespace;
  const apply = (name: string, spec: Omit<AgentPolicySpec, 'apiClient' | 'suspended'>): Promise<AgentPolicy> =>
    svc.store.create({ apiVersion: API_VERSION, kind: 'AgentPolicy', metadata: { name, namespace }, spec: { apiClient: clientId, suspended: false, ...spec } });

  // The key-level policy: the counter, at most 10 executions an hour for the whole key, and a USD budget that does
  // not bind (its spend is what the receipts are checked against).
  const policyName = `${clientId}-budget`;
  await apply(policyName, {
    rules: [{ name: 'counter', action: 'accept', targets: [counter] }],
    budgets: [
      { name: 'burst', window: '1h', count: 10 },
      { name: 'daily-usd', window: '24h', usd: '100000' },
    ],
  });
  // Both roles follow the policy through their watches: the dry-run shows its budgets once the gateway has it.
  await expect.poll(async () => (await api.post('/policy/evaluate', call('b-0'))).body.budgets?.length, { timeout: 10_000, interval: 50 }).toBe(2);

  // 50 at once, from 10 agents (5 each): one key-level budget counts them all.
  const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => api.post('/execute', call(`b-${tag}-${i % 10}`))));
  const accepted = answers.filter((a) => a.status === 200);
  const refused = answers.filter((a) => a.status !== 200);
  expect(accepted.length, JSON.stringify(refused.map((r) => r.body).slice(0, 3))).toBeGreaterThanOrEqual(9);
  expect(accepted.length).toBeLessThanOrEqual(10);
  for (const r of refused) {
    expect(r.status, JSON.stringify(r.body)).toBe(403);
    expect(r.body).toMatchObject({ error: 'policy_denied', policy: policyName, budget: 'burst', rule: null });
    expect(r.body.message).toMatch(/^budget burst of policy .*: 10 executions per 1h for the key, 10 already in the window; nothing was executed$/);
  }
  const finals = await Promise.all(accepted.map((a) => api.waitForTerminal(a.body.request_id, 90_000)));
  expect(finals.map((f) => f.status)).toEqual(finals.map(() => 'confirmed'));

  // The spend recorded is the sum of the actual costs in the receipts: each operation's UserOperationEvent gas at
  // the price its reservation recorded (the chain's nativeUsdPrice), nothing else leaving the wallets.
  const client = svc.devnet.publicClient(chain) as PublicClient;
  const nativeUsdMicro = usdToMicro(config.nativeUsdPrice);
  let expected = 0n;
  for (const f of finals) {
    const receipt = await client.getTransactionReceipt({ hash: f.tx_hash as Hex });
    const events = parseEventLogs({ abi: [USER_OPERATION_EVENT], logs: receipt.logs, eventName: 'UserOperationEvent' });
    const opHash = (await svc.store.get('ExecutionRequest', f.request_id)).status!.userOperation!.hash.toLowerCase();
    const own = events.filter((e) => e.args.userOpHash.toLowerCase() === opHash);
    expect(own).toHaveLength(1);
    expected += weiToMicroUsd(own[0]!.args.actualGasCost, nativeUsdMicro);
  }
  await expect
    .poll(async () => (await svc.store.get('AgentPolicy', policyName)).status?.spend, { timeout: 15_000, interval: 200 })
    .toEqual([
      expect.objectContaining({ budget: 'burst', count: accepted.length, usd: formatMicroUsd(expected) }),
      expect.objectContaining({ budget: 'daily-usd', count: accepted.length, usd: formatMicroUsd(expected) }),
    ]);
  const summary = (await svc.store.get('AgentPolicy', policyName)).status?.spendSummary;
  expect(summary).toBe(`burst ${accepted.length}/10, daily-usd ${formatMicroUsd(expected)}/100000 USD`);
  // The agent reads the same, with what is left.
  const shown = (await api.get(`/policy?agent_id=b-${tag}-0`)).body as Json;
  expect(shown.policies[0].budgets).toEqual([
    expect.objectContaining({ policy: policyName, name: 'burst', window: '1h', count: 10, usd: null, spent: expect.objectContaining({ count: accepted.length, remaining_count: 10 - accepted.length }) }),
    expect.objectContaining({ name: 'daily-usd', usd: '100000', spent: expect.objectContaining({ usd: formatMicroUsd(expected) }) }),
  ]);

  // A USD budget smaller than one execution's gas: refused with the figures, nothing created on chain.
  const { api: small, clientId: smallClient } = await svc.newKey('sponsored');
  await svc.store.create({
    apiVersion: API_VERSION,
    kind: 'AgentPolicy',
    metadata: { name: `${smallClient}-tiny`, namespace },
    spec: { apiClient: smallClient, suspended: false, rules: [{ name: 'counter', action: 'accept', targets: [counter] }], budgets: [{ name: 'tiny', window: '24h', usd: '0.000001' }] },
  });
  await expect.poll(async () => (await small.post('/policy/evaluate', call('t'))).body.budgets?.length, { timeout: 10_000, interval: 50 }).toBe(1);
  const tiny = await small.post('/execute', call(`t-${tag}`));
  expect(tiny.status, JSON.stringify(tiny.body)).toBe(403);
  expect(tiny.body).toMatchObject({ error: 'policy_denied', policy: `${smallClient}-tiny`, budget: 'tiny' });
  expect(tiny.body.message).toMatch(/^budget tiny of policy .*: 0\.000001 USD per 24h for the key, spent 0, this execution [0-9.]+; nothing was executed$/);

  // Token outflows count at their price: 60 USDC fits a 100 USD budget once, not twice; aUSD has no price: refused.
  const eth = 'ethereum';
  const token = (symbol: string) => svc.devnet.chain(eth).tokens.find((t) => t.symbol === symbol)!.address as Address;
  const { api: spender, clientId: spenderClient } = await svc.newKey('sponsored');
  await svc.store.create({
    apiVersion: API_VERSION,
    kind: 'AgentPolicy',
    metadata: { name: `${spenderClient}-usd`, namespace },
    spec: { apiClient: spenderClient, suspended: false, rules: [{ name: 'tokens', action: 'accept', targets: [token('USDC'), token('aUSD')] }], budgets: [{ name: 'daily', window: '24h', usd: '100' }] },
  });
  const agent = `u-${tag}`;
  const wallet = (await spender.get(`/wallet?agent_id=${agent}&chain=${eth}`)).body.smart_wallet_address as Address;
  const payer = await newPayer(svc.devnet, eth);
  await payer.mint('USDC', wallet, 200_000_000n);
  await payer.mint('aUSD', wallet, 10_000_000n);
  const transfer = (symbol: string, amount: bigint) => ({
    agent_id: agent,
    chain: eth,
    target_contract: token(symbol),
    calldata: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: ['0x000000000000000000000000000000000000dEaD', amount] }),
    value: '0',
  });
  await expect.poll(async () => (await spender.post('/policy/evaluate', transfer('USDC', 1n))).body.budgets?.length, { timeout: 10_000, interval: 50 }).toBe(1);
  const first = await spender.post('/execute', transfer('USDC', 60_000_000n));
  expect(first.status, JSON.stringify(first.body)).toBe(200);
  expect((await spender.waitForTerminal(first.body.request_id, 60_000)).status).toBe('confirmed');
  const reserved = (await svc.store.get('ExecutionRequest', first.body.request_id)).status!.spend!;
  expect(reserved.outflowsMicroUsd).toBe('60000000'); // 60 USDC at the oracle's 1 USD
  const second = await spender.post('/execute', transfer('USDC', 60_000_000n));
  expect(second.status, JSON.stringify(second.body)).toBe(403);
  expect(second.body.message).toMatch(/^budget daily of policy .*: 100 USD per 24h for the key, spent 60\.[0-9]+, this execution 60\.[0-9]+; nothing was executed$/);
  const unpriced = await spender.post('/execute', transfer('aUSD', 1_000_000n));
  expect(unpriced.status, JSON.stringify(unpriced.body)).toBe(403);
  expect(unpriced.body).toMatchObject({ error: 'policy_denied', budget: 'daily' });
  expect(unpriced.body.message).toMatch(new RegExp(`cannot count this execution: token ${token('aUSD')} is not priced`, 'i'));
  // An allowance counts at its amount: approve(other, 30 USDC) fits what is left (and holds 30 USD); approve(other,
  // max) counts as more than any budget, refused.
  const approve = (amount: bigint) => ({ ...transfer('USDC', 0n), calldata: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: ['0x000000000000000000000000000000000000dEaD', amount] }) });
  const bounded = await spender.post('/execute', approve(30_000_000n));
  expect(bounded.status, JSON.stringify(bounded.body)).toBe(200);
  expect((await svc.store.get('ExecutionRequest', bounded.body.request_id)).status!.spend!.outflowsMicroUsd).toBe('30000000');
  const unlimited = await spender.post('/execute', approve(maxUint256));
  expect(unlimited.status, JSON.stringify(unlimited.body)).toBe(403);
  expect(unlimited.body).toMatchObject({ error: 'policy_denied', budget: 'daily' });
  expect(unlimited.body.message).toMatch(/cannot count this execution: it grants an allowance without bound/);
}
