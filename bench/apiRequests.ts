/**
 * `node bin/run-ts.js bench/apiRequests.ts`: how many requests the kube-apiserver serves per execution in the
 * cluster layout, read from the API server's own `apiserver_request_total` before and after N sequential
 * executions (BENCH_REQUESTS, default 50), by resource, verb and subresource. Counts, not timings: they do not
 * depend on the machine. Watches are long-lived and counted once each, so they do not scale with N.
 *
 * One scenario per feature, each its own key and agent, so what a feature adds reads as the difference from the
 * first: a sponsored execute with no policy (the base: a create and two status writes), under a policy with a
 * budget (its reservation), with a callback URL (the webhook's delivery record), and a manual-mode execute paid
 * on chain (the 402, the proof attached to the request, the PaymentReceipt claim).
 */
import { encodeFunctionData, erc20Abi, type Address } from 'viem';
import { API_VERSION } from '../src/api/v1alpha1/index.ts';
import { devnetChain, devnetWalletClient } from '../src/devnet/clients.ts';
import { counterAbi } from '../src/devnet/contracts.ts';
import type { KubeApiServer } from '../test/support/kubeApiServer.ts';
import { startWebhookReceiver } from '../test/support/webhookReceiver.ts';
import { withBenchCluster } from './clusterEnv.ts';
import { watchTerminal } from './load.ts';

const N = Number(process.env.BENCH_REQUESTS ?? 50);

/** apiserver_request_total of this service's resources (agentwallet.dev), by "resource VERB subresource". */
async function counts(api: KubeApiServer): Promise<Map<string, number>> {
  const r = await api.kubectl(['get', '--raw', '/metrics']);
  const out = new Map<string, number>();
  for (const line of r.stdout.split('\n')) {
    if (!line.startsWith('apiserver_request_total{') || !line.includes('group="agentwallet.dev"')) continue;
    const label = (name: string) => new RegExp(`[{,]${name}="([^"]*)"`).exec(line)?.[1] ?? '';
    const key = `${label('resource')} ${label('verb')}${label('subresource') ? ` ${label('subresource')}` : ''}`;
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

const receiver = await startWebhookReceiver();
try {
  await withBenchCluster(
    'api',
    async ({ cluster, api, manifest }) => {
      const chain = manifest.chains.find((c) => c.name === 'base')!;
      const increment = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
      const terminal = watchTerminal(cluster.store, cluster.namespace);
      const finished = (id: string) => terminal.finished(id);
      const post = async (apiKey: string, body: unknown, proof?: string) => {
        const res = await fetch(`${cluster.url}/execute`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': apiKey, ...(proof && { 'x-payment-proof': proof }) },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as Record<string, any> };
      };
      const call = (agent: string, extra: Record<string, unknown> = {}) => ({ agent_id: agent, chain: 'base', target_contract: chain.testContracts.counter, calldata: increment, value: '0', ...extra });

      /** One sponsored execute → confirmed (and, with a callback URL, its webhook delivered). */
      const sponsored = (apiKey: string, agent: string, extra: Record<string, unknown> = {}) => async () => {
        const r = await post(apiKey, call(agent, extra));
        if (r.status !== 200) throw new Error(`execute: HTTP ${r.status} ${JSON.stringify(r.body)}`);
        const done = await finished(r.body.request_id);
        if (done.status?.phase !== 'Confirmed') throw new Error(`${r.body.request_id} ended ${done.status?.phase}`);
      };
      const payer = devnetWalletClient(devnetChain(chain), manifest.accounts.funded[1]!.privateKey);
      const usdc = chain.tokens.find((t) => t.symbol === 'USDC')!.address as Address;
      /** One manual execute: 402, the payer's USDC transfer mined, the proof, → confirmed. */
      const manual = (apiKey: string, agent: string) => async () => {
        const quote = await post(apiKey, call(agent));
        if (quote.status !== 402) throw new Error(`execute: HTTP ${quote.status} (expected 402) ${JSON.stringify(quote.body)}`);
        const receipt = await payer.writeContractSync({
          address: usdc,
          abi: erc20Abi,
          functionName: 'transfer',
          args: [quote.body.payment_address as Address, BigInt(quote.body.required_amount_raw.USDC)],
        });
        const proof = { request_id: quote.body.request_id, payer: payer.account.address, token: 'USDC', chain: 'base', tx_hash: receipt.transactionHash };
        const paid = await post(apiKey, call(agent), JSON.stringify(proof));
        if (paid.status !== 200) throw new Error(`execute with proof: HTTP ${paid.status} ${JSON.stringify(paid.body)}`);
        const done = await finished(paid.body.request_id);
        if (done.status?.phase !== 'Confirmed') throw new Error(`${paid.body.request_id} ended ${done.status?.phase}`);
      };

      const keyWithBudget = async () => {
        const k = await cluster.newKey();
        await cluster.store.create({
          apiVersion: API_VERSION,
          kind: 'AgentPolicy',
          metadata: { name: `${k.clientId}-bench`, namespace: cluster.namespace },
          spec: { apiClient: k.clientId, suspended: false, rules: [{ name: 'counter', action: 'accept', targets: [chain.testContracts.counter] }], budgets: [{ name: 'daily', window: '24h', usd: '1000000', count: 1_000_000 }] },
        });
        await new Promise((r) => setTimeout(r, 1_000)); // the policy reaches the controller's cache
        return k.apiKey;
      };
      const scenarios: [string, () => Promise<() => Promise<void>>][] = [
        ['sponsored, no policy (the base)', async () => sponsored((await cluster.newKey()).apiKey, 'api-base')],
        ['sponsored, under a budget', async () => sponsored(await keyWithBudget(), 'api-budget')],
        ['sponsored, with a callback URL', async () => sponsored((await cluster.newKey()).apiKey, 'api-webhook', { callback_url: `https://localhost:${receiver.port}/hook` })],
        ['manual, paid on chain', async () => manual((await cluster.newKey('manual')).apiKey, 'api-manual')],
      ];
      console.log(`kube-apiserver requests per execution (${N} sequential executions per scenario, cluster layout; resource verb subresource):`);
      for (const [name, setup] of scenarios) {
        const one = await setup();
        await one(); // warm up: the wallet deployed, informers listed, connections open
        await new Promise((r) => setTimeout(r, 2_000)); // everything of the warm-up has landed
        const before = await counts(api);
        for (let i = 0; i < N; i++) await one();
        await new Promise((r) => setTimeout(r, 2_000)); // the last writes (a webhook's record) land
        const after = await counts(api);
        console.log(`  ${name}:`);
        let total = 0;
        for (const key of [...new Set([...before.keys(), ...after.keys()])].sort()) {
          const d = (after.get(key) ?? 0) - (before.get(key) ?? 0);
          if (d === 0) continue;
          total += d;
          console.log(`    ${key.padEnd(40)} ${(d / N).toFixed(2)}`);
        }
        console.log(`    ${'total'.padEnd(40)} ${(total / N).toFixed(2)}`);
      }
      terminal.stop();
    },
    { webhooks: { allowLoopback: true }, controllerEnv: { NODE_EXTRA_CA_CERTS: receiver.caPath } },
  );
} finally {
  await receiver.close();
}
