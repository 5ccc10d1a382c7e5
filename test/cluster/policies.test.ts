/**
 * AgentPolicies in the cluster layout, written as an operator does (`policy … --kube`): the gateway and the
 * controllers, under the chart's RBAC, read them and govern the key's next request; the kill switch stops it.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { tempDir } from '../support/env.ts';
import { until } from '../support/until.ts';

const run = promisify(execFile);

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.stop();
});

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
    const listed = JSON.parse(await policyCli('list', '--json')) as { name: string; api_client: string }[];
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
    expect(await policyCli('list')).toMatch(/^bot-1-increment .*SUSPENDED/);
  });
});
