/**
 * AgentPolicies in the cluster layout, on one cluster start: written as an operator does (`policy … --kube`), the
 * gateway and the controllers, under the chart's RBAC, read them and govern the key's next request; the scenarios
 * of test/support/scenarios/ (policies, budgets, USD rules, the kill switch withdrawing signed operations) through
 * the API server and the role processes; kubectl's Spend column and a policy written past the checks; and a
 * simulation's outflows, asked of a chain worker process over gRPC (src/chain/simulateOutflows.ts).
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, getAddress, parseEther } from 'viem';
import { parse } from 'yaml';
import { connectChainWorker, type RemoteChainWorker } from '../../src/chain/grpc/client.ts';
import { counterAbi, testStablecoinAbi } from '../../src/devnet/contracts.ts';
import { uniqueId } from '../support/chainUnderTest.ts';
import { budgetsScenario } from '../support/scenarios/budgets.ts';
import { killSwitchHeldScenario } from '../support/scenarios/killSwitch.ts';
import { policyUsdScenario } from '../support/scenarios/policyUsd.ts';
import { policiesScenario } from '../support/scenarios/policies.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { kubeBinDir } from '../support/kubeApiServer.ts';
import { tempDir } from '../support/env.ts';
import { until } from '../support/until.ts';

const run = promisify(execFile);

let cluster: TestCluster;
let worker: RemoteChainWorker;
beforeAll(async () => {
  cluster = await startTestCluster();
  const config = parse(readFileSync(cluster.configPath, 'utf8')) as { chains: { name: string; worker: { address: string } }[] };
  worker = connectChainWorker('base', config.chains.find((c) => c.name === 'base')!.worker.address);
});
afterAll(async () => {
  await worker?.close();
  await cluster?.stop();
});

it('AgentPolicies through the API server: accepted and refused (403, nothing created), the controller decides, the kill switch', { timeout: 180_000 }, () =>
  policiesScenario(cluster));

const policyCli = async (...args: string[]) =>
  (await run(process.execPath, ['bin/agent-wallet.js', 'policy', ...args, '--kube', '--namespace', cluster.namespace, '--kubeconfig', cluster.kubeconfigPath])).stdout;

describe('policy --kube', () => {
  it('applies and lists a policy; the key’s next requests are judged by it, and suspend stops them', async () => {
    const { api, clientId } = await cluster.newKey();
    const counter = cluster.devnet.chain('base').testContracts.counter;
    const execute = (calldata: `0x${string}`) => api.post('/execute', { agent_id: 'bot-1', chain: 'base', target_contract: counter, calldata, value: '0' });
    const increment = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
    const incrementBy = encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [2n] });

    const file = join(tempDir('aw-policy-'), 'policy.yaml');
    writeFileSync(
      file,
      `name: bot-1-increment\nspec:\n  apiClient: ${clientId}\n  agents: { match: exact, agentId: bot-1 }\n  rules:\n` +
        `    - name: increment-only\n      action: accept\n      chains: [base]\n      targets: [${counter}]\n      function: { signature: increment() }\n`,
    );
    expect(await policyCli('apply', '-f', file)).toMatch(/^created policy bot-1-increment /);
    const listed = JSON.parse(await policyCli('list', '--client', clientId, '--json')) as { name: string; api_client: string }[];
    expect(listed).toEqual([expect.objectContaining({ name: 'bot-1-increment', api_client: clientId })]);

    // The roles learn of the policy through their watches: the first refusal is awaited, then every answer is the policy's.
    const denied = await until('the policy to refuse incrementBy', async () => {
      const r = await execute(incrementBy);
      return r.status === 403 ? r : undefined;
    });
    expect([denied.body.error, denied.body.policy]).toEqual(['policy_denied', 'bot-1-increment']);
    const ok = await execute(increment);
    expect(ok.status).toBe(200);
    expect((await api.waitForTerminal(ok.body.request_id)).status).toBe('confirmed');

    expect(await policyCli('suspend', 'bot-1-increment')).toMatch(/^suspended policy bot-1-increment/);
    const suspended = await until('the kill switch', async () => {
      const r = await execute(increment);
      return r.status === 403 ? r : undefined;
    });
    expect(suspended.body.error).toBe('agent_suspended');
    expect(await policyCli('list', '--client', clientId)).toMatch(/^bot-1-increment .*SUSPENDED/);
  });
});

describe('simulate with outflows (cluster: the chain worker process over gRPC)', () => {
  it('lists a token transfer and native value out of the wallet, [] for a call that moves nothing, nothing unless asked', async () => {
    const base = cluster.devnet.chain('base');
    const client = cluster.devnet.publicClient('base');
    const funded = cluster.devnet.walletClient('base', 0);
    const usdc = base.tokens.find((t) => t.symbol === 'USDC')!.address;
    const ref = { apiClient: 'acme', agentId: uniqueId('outflows') };
    const { address } = await worker.resolveWallet(ref);
    await client.waitForTransactionReceipt({ hash: await funded.writeContract({ address: usdc, abi: testStablecoinAbi, functionName: 'mint', args: [address, 100n] }) });
    await client.waitForTransactionReceipt({ hash: await funded.sendTransaction({ to: address, value: parseEther('0.01') }) });
    const sink = getAddress('0x000000000000000000000000000000000000dEaD');
    const calls = [
      { target: usdc, value: '0', data: encodeFunctionData({ abi: testStablecoinAbi, functionName: 'transfer', args: [sink, 40n] }) },
      { target: sink, value: '9', data: '0x' as const },
    ];
    const r = await worker.simulate(ref, calls, { outflows: true });
    if (!r.ok) throw new Error(JSON.stringify(r.error));
    expect(r.value.outflows).toEqual([
      { kind: 'erc20', token: usdc, to: sink, amount: 40n },
      { kind: 'native', to: sink, amount: 9n },
    ]);
    const counter = { target: base.testContracts.counter, value: '0', data: encodeFunctionData({ abi: [{ type: 'function', name: 'increment', inputs: [], outputs: [], stateMutability: 'nonpayable' }], functionName: 'increment' }) };
    const none = await worker.simulate(ref, [counter], { outflows: true });
    expect(none.ok && none.value.outflows).toEqual([]);
    const plain = await worker.simulate(ref, calls);
    expect(plain.ok && 'outflows' in plain.value).toBe(false);
  });
});

it('budgets through the API server: 50 at once against a budget of 10, the spend recorded equals the receipts’ sum', { timeout: 240_000 }, () =>
  budgetsScenario(cluster));

describe('kubectl and AgentPolicies written past the CLI’s checks', () => {
  const kubectl = async (...args: string[]) =>
    (await run(join(await kubeBinDir(), 'kubectl'), ['--kubeconfig', cluster.kubeconfigPath, '-n', cluster.namespace, ...args])).stdout;

  it('shows each budgeted policy’s spend in its Spend column', async () => {
    const { api, clientId } = await cluster.newKey();
    const counter = cluster.devnet.chain('base').testContracts.counter;
    const file = join(tempDir('aw-policy-'), 'budget.yaml');
    writeFileSync(file, `name: ${clientId}-spend\nspec:\n  apiClient: ${clientId}\n  rules: [{ name: counter, action: accept, targets: [${counter}] }]\n  budgets: [{ name: hourly, window: 1h, count: 5 }]\n`);
    await policyCli('apply', '-f', file);
    const ok = await until('the budgeted policy to be read', async () => {
      const r = await api.post('/execute', { agent_id: 'spender', chain: 'base', target_contract: counter, calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }), value: '0' });
      return r.status === 200 ? r : undefined;
    });
    expect((await api.waitForTerminal(ok.body.request_id)).status).toBe('confirmed');
    const line = await until('the Spend column', async () => {
      const out = await kubectl('get', 'agentpolicies', `${clientId}-spend`);
      return out.includes('hourly 1/5') ? out : undefined;
    });
    expect(line.split('\n')[0]).toMatch(/NAME\s+CLIENT\s+MATCH\s+AGENT\s+SUSPENDED\s+SPEND/);
  });

  it('a policy the schema refuses (kubectl apply) is read fail closed: its key’s requests are refused, naming it, until it is fixed', async () => {
    const { api, clientId } = await cluster.newKey();
    const counter = cluster.devnet.chain('base').testContracts.counter;
    const file = join(tempDir('aw-policy-'), 'raw.yaml');
    // A one-week window: a string the CRD takes, a window the service does not know (at most 31d, units s m h d).
    writeFileSync(
      file,
      `apiVersion: agentwallet.dev/v1alpha1\nkind: AgentPolicy\nmetadata: { name: ${clientId}-raw }\nspec:\n  apiClient: ${clientId}\n  suspended: false\n` +
        `  rules: [{ name: counter, action: accept, targets: ["${counter}"] }]\n  budgets: [{ name: weekly, window: 1w, count: 100 }]\n`,
    );
    await kubectl('apply', '-f', file);
    const refused = await until('the unreadable policy to refuse', async () => {
      const r = await api.post('/execute', { agent_id: 'raw-1', chain: 'base', target_contract: counter, calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }), value: '0' });
      return r.status === 403 ? r : undefined;
    });
    expect(refused.body).toMatchObject({ error: 'policy_denied', policy: `${clientId}-raw`, rule: null });
    expect(refused.body.message).toMatch(/as stored cannot be read \(spec\.budgets\.0\.window: .*\); it accepts nothing until it is fixed/);
    expect(await policyCli('list', '--client', clientId)).toMatch(/UNREADABLE, accepts nothing/);
    await expect(policyCli('get', `${clientId}-raw`)).rejects.toThrow(/as stored cannot be read/);
    // Fixed with the CLI (which checks it whole): the key's next request is accepted.
    const fixed = join(tempDir('aw-policy-'), 'fixed.yaml');
    writeFileSync(fixed, `name: ${clientId}-raw\nspec:\n  apiClient: ${clientId}\n  rules: [{ name: counter, action: accept, targets: [${counter}] }]\n  budgets: [{ name: weekly, window: 7d, count: 100 }]\n`);
    await policyCli('apply', '-f', fixed);
    await until('the fixed policy to accept', async () => {
      const r = await api.post('/execute', { agent_id: 'raw-1', chain: 'base', target_contract: counter, calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }), value: '0' });
      return r.status === 200 ? r : undefined;
    });
  });
});

// One cluster start for every policy scenario: each file of the cluster project starts its own (≈ 15 s).
it('a USD rule through the API server and the role processes: 403 over the limit, executed under it, an unpriced token refused', { timeout: 180_000 }, () =>
  policyUsdScenario(cluster));

// The controller (its own process) asks the chain worker processes over gRPC to withdraw what their bundlers hold
// (WithdrawOperation); the test under load runs embedded (test/e2e/killSwitch.test.ts).
it('the kill switch withdraws signed operations waiting in a worker process’s bundler: agent_suspended, nothing on chain; resumed, the nonce is reused', { timeout: 180_000 }, () =>
  killSwitchHeldScenario(cluster));
