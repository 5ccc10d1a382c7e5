/**
 * How soon a confirmation is shown: from a request's terminal status being committed (the store write
 * acknowledged, seen on a store watch in this process) to the typed client doing what `execute --wait` does
 * (client.waitForTerminal: the record, then waiting GETs from the state last seen) having it, where the CLI
 * prints it. Sequential executes, one agent. Beside it, from the same requests: execute sent → terminal status
 * committed, the request's own time to confirmation.
 *
 * The watch is this process's own: in the cluster layout it is a watch of the API server, as the gateway's
 * informer is, so the figure leaves out the delay between the write and its watch event (both sides share it).
 */
import { encodeFunctionData } from 'viem';
import { isTerminal } from '../src/api/v1alpha1/index.ts';
import { createClient } from '../src/client/index.ts';
import type { ChainName } from '../src/config/chains.ts';
import { counterAbi } from '../src/devnet/contracts.ts';
import type { ResourceStore } from '../src/store/types.ts';
import { fmt, pct } from './load.ts';

export interface ConfirmationTarget {
  url: string;
  apiKey: string;
  store: ResourceStore;
  namespace?: string;
  counterOf(chain: ChainName): string;
}

export interface ConfirmationLatency {
  /** Terminal status committed → the client has the record (where the CLI prints it), ms. */
  commitToPrint: number[];
  /** Execute sent → terminal status committed, ms (the reference). */
  executeToCommit: number[];
}

export async function measureConfirmationLatency(target: ConfirmationTarget, n: number): Promise<ConfirmationLatency> {
  const terminalAt = new Map<string, number>();
  const watch = target.store.watch('ExecutionRequest', target.namespace ? { namespace: target.namespace } : {}, (e) => {
    const name = e.object.metadata.name;
    if (isTerminal(e.object.status?.phase) && !terminalAt.has(name)) terminalAt.set(name, performance.now());
  });
  const client = createClient({ baseUrl: target.url, apiKey: target.apiKey });
  const calldata = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
  const out: ConfirmationLatency = { commitToPrint: [], executeToCommit: [] };
  try {
    for (let i = 0; i <= n; i++) {
      const sent = performance.now();
      const r = await client.execute({ agent_id: 'confirmation-bench-agent', chain: 'base', target_contract: target.counterOf('base'), calldata });
      if (!r.ok) throw new Error(`execute: ${r.error.status} ${r.error.code}: ${r.error.message}`);
      let printedAt: number | undefined;
      const done = await client.waitForTerminal(r.value.request_id, {
        timeoutMs: 120_000,
        onStatus: (s) => {
          if (['confirmed', 'reverted', 'failed'].includes(s.status)) printedAt ??= performance.now();
        },
      });
      if (!done.ok) throw new Error(`${r.value.request_id}: ${done.error.code}: ${done.error.message}`);
      if (done.value.status !== 'confirmed') throw new Error(`${r.value.request_id} ended ${done.value.status}`);
      // This process's watch and the gateway's are two watches of one store: either may hear of the write first.
      const committed = await seen(terminalAt, r.value.request_id);
      if (printedAt === undefined) throw new Error(`${r.value.request_id}: no terminal status shown`);
      if (i === 0) continue; // the first one also deploys the wallet
      out.commitToPrint.push(printedAt - committed);
      out.executeToCommit.push(committed - sent);
    }
  } finally {
    watch.stop();
  }
  return out;
}

async function seen(at: Map<string, number>, name: string): Promise<number> {
  for (let i = 0; i < 5_000 && !at.has(name); i++) await new Promise((resolve) => setTimeout(resolve, 1));
  const t = at.get(name);
  if (t === undefined) throw new Error(`${name}: its terminal status never reached this process's watch`);
  return t;
}

export function printConfirmationLatency(r: ConfirmationLatency): void {
  const line = (xs: number[]) => `p50 ${fmt(pct(xs, 50))}, p95 ${fmt(pct(xs, 95))}, max ${fmt(Math.max(...xs))}`;
  console.log(`confirmation shown, terminal status committed → client has it (execute --wait), ${r.commitToPrint.length} sequential: ${line(r.commitToPrint)}`);
  console.log(`  reference, same requests: execute sent → terminal status committed: ${line(r.executeToCommit)}`);
}
