/**
 * Budgets against an agent holding a manual-mode key (an outside audit's attacks, replayed on the devnet): unpaid
 * quotes left to age past a short window and then all paid; a request paid after a budget was added; a call made
 * dearer between its quote and its payment. Each execution is held again at signing, on what is signed then.
 */
import { expect, it } from 'vitest';
import { encodeFunctionData, type Address } from 'viem';
import { API_VERSION, type AgentPolicySpec } from '../../src/api/v1alpha1/index.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { testDevnet } from '../support/env.ts';
import { newPayer } from '../support/payer.ts';
import { useTestService } from '../support/service.ts';

const svc = useTestService();
const CHAIN = 'base';
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers read loosely in tests

async function setUp(budgets: AgentPolicySpec['budgets']) {
  const s = svc();
  const counter = s.devnet.chain(CHAIN).testContracts.counter;
  const body = (agent: string) => ({ agent_id: agent, chain: CHAIN, target_contract: counter, calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }), value: '0' });
  const { api, clientId } = await s.newKey('manual');
  const namespace = (await s.store.get('ApiClient', clientId)).metadata.namespace;
  const name = `${clientId}-attack`;
  await s.store.create({
    apiVersion: API_VERSION,
    kind: 'AgentPolicy',
    metadata: { name, namespace },
    spec: { apiClient: clientId, suspended: false, rules: [{ name: 'counter', action: 'accept', targets: [counter] }], ...(budgets && { budgets }) },
  });
  const payer = await newPayer(testDevnet(), CHAIN);
  /** Pays a 402's quote with a proof, as the agent would (docs/payments.md). */
  const pay = async (agent: string, quote: Json) => {
    const tx = await payer.pay('USDC', quote.payment_address as Address, BigInt(quote.required_amount_raw.USDC));
    return api.post('/execute', body(agent), { 'x-payment-proof': JSON.stringify({ payer: payer.address, token: 'USDC', chain: CHAIN, tx_hash: tx, request_id: quote.request_id }) });
  };
  return { s, api, body, pay, name, namespace };
}

it('a burst budget (1 per 3 s) is not bypassed by letting unpaid reservations age out of the window, then paying them all', { timeout: 120_000 }, async () => {
  const { s, api, body, pay } = await setUp([{ name: 'burst', window: '3s', count: 1 }]);
  await expect.poll(async () => (await api.post('/policy/evaluate', body('probe'))).body.budgets?.length, { timeout: 10_000, interval: 50 }).toBe(1);
  const a = await api.post('/execute', body('atk-a'));
  expect(a.status, JSON.stringify(a.body)).toBe(402); // reserved, waiting for its payment (quote valid 10 min)
  expect((await api.post('/execute', body('atk-x'))).status).toBe(403); // the burst is full
  await new Promise((r) => setTimeout(r, 3_200)); // a's reservation leaves the window; a is still unpaid, unsigned
  const b = await api.post('/execute', body('atk-b'));
  const paid = [await pay('atk-a', a.body)];
  if (b.status === 402) paid.push(await pay('atk-b', b.body));
  const finals = await Promise.all(paid.filter((p) => p.status === 200).map((p) => api.waitForTerminal(p.body.request_id, 60_000)));
  const signed = await Promise.all(finals.filter((f) => f.status === 'confirmed').map(async (f) => Date.parse((await s.store.get('ExecutionRequest', f.request_id)).status!.queuedTime!)));
  const gapMs = signed.length === 2 ? Math.abs(signed[0]! - signed[1]!) : undefined;
  // docs/policies.md: "A request waiting for its payment holds its reservation until its quote expires."
  expect(b.status, `b admitted while a still waited unpaid; ${signed.length} executions confirmed, signed ${gapMs} ms apart under "1 per 3s"`).toBe(403);
});

it('a budget added while a request waits for its payment bounds it when it is paid, and the recorded spend counts it', { timeout: 120_000 }, async () => {
  const { s, api, body, pay, name, namespace } = await setUp(undefined);
  const a = await api.post('/execute', body('late-a'));
  expect(a.status, JSON.stringify(a.body)).toBe(402); // no budget yet: nothing reserved
  // The operator adds a budget of one execution a day (docs: "a policy change applies ... to every request not yet signed").
  const current = await s.store.get('AgentPolicy', name, namespace);
  await s.store.update({ ...current, spec: { ...current.spec, budgets: [{ name: 'one', window: '24h', count: 1 }] } });
  await expect.poll(async () => (await api.post('/policy/evaluate', body('probe'))).body.budgets?.length, { timeout: 10_000, interval: 50 }).toBe(1);
  const b = await api.post('/execute', body('late-b'));
  expect(b.status, JSON.stringify(b.body)).toBe(402); // reserved: the one of the day
  expect((await api.post('/execute', body('late-c'))).status).toBe(403); // full
  const paid = [await pay('late-a', a.body), await pay('late-b', b.body)];
  const finals = await Promise.all(paid.filter((p) => p.status === 200).map((p) => api.waitForTerminal(p.body.request_id, 60_000)));
  const confirmed = finals.filter((f) => f.status === 'confirmed').length;
  await new Promise((r) => setTimeout(r, 6_000)); // the controller writes the policy's spend every 5 s
  const recorded = (await s.store.get('AgentPolicy', name, namespace)).status?.spend?.[0]?.count;
  expect(confirmed, `a (paid after the budget was added) was signed without a reservation (status.spend ${JSON.stringify((await s.store.get('ExecutionRequest', a.body.request_id)).status?.spend)}); the policy records ${recorded}`).toBeLessThanOrEqual(1);
  expect(recorded).toBe(confirmed);
});

/**
 * A contract whose gas the agent controls from outside the service: a call with 32 bytes of calldata stores a
 * loop count; any other call loops that many times (~40 gas each). Runtime:
 * CALLDATASIZE 32 EQ →set; SLOAD(0) loop{DUP1 ISZERO →end; 1 SWAP1 SUB; →loop} end:STOP set:SSTORE(0, CALLDATALOAD(0)) STOP
 */
const BURNER_RUNTIME = '366020146019576000545b801560175760019003600a565b005b60003560005500';

it('a paid request cannot cost more than it reserved: the gas signed at signing stays within the reservation', { timeout: 120_000 }, async () => {
  const s = svc();
  const devnet = testDevnet();
  const deployer = devnet.walletClient(CHAIN, 0);
  const client = devnet.publicClient(CHAIN);
  // Init: PUSH1 0x21 DUP1 PUSH1 0x0b PUSH1 0 CODECOPY PUSH1 0 RETURN, then the runtime.
  const initcode = `0x6021${'80'}600b600039${'6000f3'}${BURNER_RUNTIME}` as `0x${string}`;
  const deployTx = await deployer.deployContract({ abi: [], bytecode: initcode, account: deployer.account!, chain: deployer.chain });
  const burner = (await client.waitForTransactionReceipt({ hash: deployTx })).contractAddress!;
  const setLoops = async (n: bigint) => {
    const tx = await deployer.sendTransaction({ to: burner, data: `0x${n.toString(16).padStart(64, '0')}`, account: deployer.account!, chain: deployer.chain });
    await client.waitForTransactionReceipt({ hash: tx });
  };
  await setLoops(0n);

  const { api, clientId } = await s.newKey('manual');
  const namespace = (await s.store.get('ApiClient', clientId)).metadata.namespace;
  const name = `${clientId}-gas`;
  await s.store.create({
    apiVersion: API_VERSION,
    kind: 'AgentPolicy',
    metadata: { name, namespace },
    spec: { apiClient: clientId, suspended: false, rules: [{ name: 'burner', action: 'accept', targets: [burner] }], budgets: [{ name: 'daily', window: '24h', usd: '1000' }] },
  });
  const body = { agent_id: 'gas-a', chain: CHAIN, target_contract: burner, calldata: '0x', value: '0' };
  await expect.poll(async () => (await api.post('/policy/evaluate', body)).body.budgets?.length, { timeout: 10_000, interval: 50 }).toBe(1);
  const quote = await api.post('/execute', body);
  expect(quote.status, JSON.stringify(quote.body)).toBe(402); // reserved at the cheap gas of 0 loops
  await setLoops(50_000n); // the agent makes its call expensive before it pays (its own EOA, outside the service)
  await new Promise((r) => setTimeout(r, 5_500)); // past the worker's estimate reuse
  const payer = await newPayer(devnet, CHAIN);
  const tx = await payer.pay('USDC', quote.body.payment_address as Address, BigInt(quote.body.required_amount_raw.USDC));
  const paid = await api.post('/execute', body, { 'x-payment-proof': JSON.stringify({ payer: payer.address, token: 'USDC', chain: CHAIN, tx_hash: tx, request_id: quote.body.request_id }) });
  expect(paid.status, JSON.stringify(paid.body)).toBe(200);
  const final = await api.waitForTerminal(quote.body.request_id, 60_000);
  const req = await s.store.get('ExecutionRequest', quote.body.request_id);
  const reserved = BigInt(req.status!.spend!.microUsd);
  const actual = (BigInt(req.status!.actualGasCostWei ?? '0') * BigInt(req.status!.spend!.nativeUsdMicro) + 10n ** 18n - 1n) / 10n ** 18n;
  expect(actual, `${final.status}: reserved ${reserved} micro-USD, the receipt charged ${actual} (callGasLimit signed ${req.status!.userOperation!.callGasLimit})`).toBeLessThanOrEqual(reserved);
});
