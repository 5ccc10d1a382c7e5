/**
 * What a budget costs an execution: execute → answered (the admission decision, `queued`) for one agent, one request
 * at a time, under a key-level policy with a budget and, interleaved in the same run, under the same policy without
 * one (the reference). The difference is the budget step: a sum over the key's requests in the window (the
 * reservation rides in the status write admission makes anyway). Also the window's size it sums over, at the end.
 */
import { encodeFunctionData } from 'viem';
import { API_VERSION } from '../src/api/v1alpha1/index.ts';
import type { ChainName } from '../src/config/chains.ts';
import { counterAbi } from '../src/devnet/contracts.ts';
import { createKey } from '../src/keys/manage.ts';
import type { EmbeddedService } from '../src/roles/embedded.ts';
import { fmt, pct } from './load.ts';

export interface BudgetCost {
  plain: number[];
  budgeted: number[];
  /** Requests the budgeted key's window held at the end. */
  windowSize: number;
}

export async function measureBudgetCost(service: EmbeddedService, counterOf: (chain: ChainName) => string, n: number): Promise<BudgetCost> {
  const chain: ChainName = 'base';
  const keyWith = async (budgets: boolean) => {
    const { api_key, key } = await createKey(service.store, { mode: 'sponsored', requestsPerSecond: 100_000, burst: 100_000 }, undefined, service.webhookSecrets);
    await service.store.create({
      apiVersion: API_VERSION,
      kind: 'AgentPolicy',
      metadata: { name: `${key.id}-bench`, namespace: 'default' },
      spec: {
        apiClient: key.id,
        suspended: false,
        rules: [{ name: 'counter', action: 'accept', targets: [counterOf(chain)] }],
        ...(budgets && { budgets: [{ name: 'daily', window: '24h', usd: '1000000', count: 1_000_000 }] }),
      },
    });
    return api_key;
  };
  const keys = { plain: await keyWith(false), budgeted: await keyWith(true) };
  await new Promise((r) => setTimeout(r, 200)); // the policies reach the caches through their watches
  const body = JSON.stringify({ agent_id: 'budget-bench', chain, target_contract: counterOf(chain), calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }) });
  const post = async (apiKey: string) => {
    const t0 = performance.now();
    const res = await fetch(`${service.url}/execute`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body });
    const answer = (await res.json()) as { status?: string };
    if (res.status !== 200) throw new Error(`execute: HTTP ${res.status} ${JSON.stringify(answer)}`);
    return performance.now() - t0;
  };
  const r: BudgetCost = { plain: [], budgeted: [], windowSize: 0 };
  // The first of each deploys nothing yet but warms the wallet's caches: not counted.
  await post(keys.plain);
  await post(keys.budgeted);
  for (let i = 0; i < n; i++) {
    r.plain.push(await post(keys.plain));
    r.budgeted.push(await post(keys.budgeted));
  }
  r.windowSize = (await service.store.list('ExecutionRequest')).items.filter((x) => x.status?.spend !== undefined).length;
  return r;
}

export function printBudgetCost(r: BudgetCost): void {
  const line = (name: string, xs: number[]) => `  ${name.padEnd(28)} p50 ${fmt(pct(xs, 50))}  p90 ${fmt(pct(xs, 90))}`;
  console.log(`\nBudgets: execute → queued, one agent, sequential (${r.plain.length} each, interleaved)`);
  console.log(line('no budget (reference)', r.plain));
  console.log(line('under a USD + count budget', r.budgeted));
  console.log(`  difference at p50: ${fmt(pct(r.budgeted, 50) - pct(r.plain, 50))} (the window's sum over ${r.windowSize} requests; the reservation rides in the status write admission makes anyway)`);
}
