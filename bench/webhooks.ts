/**
 * Webhook delivery latency: from a request's terminal state being committed (seen on a store watch in this
 * process, as the webhook controller's informer sees it) to the HTTPS receiver having the whole body, over
 * sequential executes with a callback_url. Beside it, measured in the same run: one signed HTTPS POST of an
 * event to the same receiver over a kept-alive connection (the network and TLS floor of an attempt), and one
 * durable status write to the same store (each attempt writes its claim before it sends).
 */
import { Agent, request } from 'node:https';
import { encodeFunctionData } from 'viem';
import { API_VERSION, isTerminal, type ExecutionRequest } from '../src/api/v1alpha1/index.ts';
import type { ChainName } from '../src/config/chains.ts';
import { counterAbi } from '../src/devnet/contracts.ts';
import type { ResourceStore } from '../src/store/types.ts';
import { generateWebhookSecret } from '../src/webhooks/secret.ts';
import { signWebhook } from '../src/webhooks/sign.ts';
import type { WebhookReceiver } from '../test/support/webhookReceiver.ts';
import { fmt, pct } from './load.ts';

export interface WebhookLatencyTarget {
  url: string;
  apiKey: string;
  store: ResourceStore;
  namespace?: string;
  counterOf(chain: ChainName): string;
  receiver: WebhookReceiver;
}

export interface WebhookLatency {
  /** Terminal state committed → receiver has the body, ms. */
  delivery: number[];
  /** One signed HTTPS POST to the same receiver, kept-alive connection, ms. */
  post: number[];
  /** One durable updateStatus on the same store, ms. */
  write: number[];
}

export async function measureWebhookLatency(target: WebhookLatencyTarget, n: number): Promise<WebhookLatency> {
  const ns = target.namespace ? { namespace: target.namespace } : {};
  const terminalAt = new Map<string, number>();
  const watch = target.store.watch('ExecutionRequest', ns, (e) => {
    if (isTerminal(e.object.status?.phase) && !terminalAt.has(e.object.metadata.name)) terminalAt.set(e.object.metadata.name, performance.now());
  });
  const calldata = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
  const delivery: number[] = [];
  try {
    for (let i = 0; i <= n; i++) {
      const before = target.receiver.received.length;
      const res = await fetch(`${target.url}/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': target.apiKey },
        body: JSON.stringify({
          agent_id: 'webhook-bench-agent',
          chain: 'base',
          target_contract: target.counterOf('base'),
          calldata,
          value: '0',
          callback_url: `${target.receiver.origin}/bench`,
        }),
      });
      const body = (await res.json()) as { request_id: string };
      if (res.status !== 200) throw new Error(`execute: HTTP ${res.status} ${JSON.stringify(body)}`);
      // One request at a time and a receiver that always answers 200: the next delivery is this one.
      const d = (await target.receiver.waitFor(before + 1, 60_000))[before]!;
      if (d.headers['webhook-id'] !== `evt_${body.request_id}`) throw new Error(`unexpected delivery ${String(d.headers['webhook-id'])}`);
      const terminal = terminalAt.get(body.request_id);
      if (terminal === undefined) throw new Error(`${body.request_id}: delivered before its terminal state was seen`);
      if (i > 0) delivery.push(d.atPerf - terminal); // the first one also deploys the wallet
    }
  } finally {
    watch.stop();
  }
  return { delivery, post: await measurePost(target.receiver, n), write: await measureWrite(target.store, target.namespace, n) };
}

async function measurePost(receiver: WebhookReceiver, n: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, ca: receiver.ca });
  const secret = generateWebhookSecret();
  const body = JSON.stringify({ id: 'evt_reference', type: 'execution.confirmed', version: 1, data: { padding: 'x'.repeat(600) } });
  const out: number[] = [];
  for (let i = 0; i <= n; i++) {
    const t0 = performance.now();
    const headers = signWebhook({ id: 'evt_reference', timestamp: Math.floor(Date.now() / 1000), body }, [secret]);
    await new Promise<void>((resolve, reject) => {
      const req = request(`${receiver.origin}/reference`, { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
    if (i > 0) out.push(performance.now() - t0); // the first one opens the connection
  }
  agent.destroy();
  return out;
}

async function measureWrite(store: ResourceStore, namespace: string | undefined, n: number): Promise<number[]> {
  // A finished request without a callback: no controller acts on it.
  let obj: ExecutionRequest = await store.create({
    apiVersion: API_VERSION,
    kind: 'ExecutionRequest',
    metadata: { name: `req-bench-write-${Date.now().toString(36)}`, namespace: namespace ?? 'default' },
    spec: { apiClient: 'bench', agentId: 'bench', chain: 'base', calls: [{ target: `0x${'11'.repeat(20)}`, value: '0', data: '0x' }], batch: false, paymentMode: 'sponsored' },
  });
  obj = await store.updateStatus({ ...obj, status: { phase: 'Failed', failure: { code: 'bench', message: 'bench' }, completionTime: new Date().toISOString() } });
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    obj = await store.updateStatus({ ...obj, status: { ...obj.status, submitAttempts: i } });
    out.push(performance.now() - t0);
  }
  await store.delete('ExecutionRequest', obj.metadata.name, namespace ? { namespace } : {});
  return out;
}

export function printWebhookLatency(r: WebhookLatency): void {
  const line = (xs: number[]) => `p50 ${fmt(pct(xs, 50))}, p99 ${fmt(pct(xs, 99))}, max ${fmt(Math.max(...xs))}`;
  console.log(`webhook delivery, terminal state → receiver has the body, ${r.delivery.length} sequential: ${line(r.delivery)}`);
  console.log(`  reference, same run: one signed HTTPS POST to the same receiver (kept-alive): ${line(r.post)}`);
  console.log(`  reference, same run: one durable status write (an attempt's claim): ${line(r.write)}`);
}
