/**
 * Completion webhooks in the cluster layout: the controllers (as the chart's ServiceAccount, reading the
 * signing secrets from Secrets) deliver to a real HTTPS receiver; the leading controller is killed with
 * deliveries due, and the other replica delivers every one of them. Nothing is lost; a delivery sent twice
 * carries the same webhook-id and body.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import type { ExecutionRequest } from '../../src/api/v1alpha1/index.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { kubeBinDir } from '../support/kubeApiServer.ts';
import { run } from './helm/chart.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhookReceiver.ts';
import { until } from '../support/until.ts';

let cluster: TestCluster;
let receiver: WebhookReceiver;
let failing = true;
beforeAll(async () => {
  // Everything fails until the test says otherwise; then 3 deliveries in 10 fail.
  receiver = await startWebhookReceiver({ respond: (_d, n) => (failing || (n * 7) % 10 < 3 ? { status: 503 } : { status: 200 }) });
  cluster = await startTestCluster({
    // Long enough (≈ 58 s of retries) that the first leader cannot use up the schedule before it is killed,
    // even on a loaded machine: with 10 attempts it once did, and the deliveries were abandoned.
    webhooks: { allowLoopback: true, retryScheduleSeconds: [1, 1, ...Array<number>(28).fill(2)] },
    controllerEnv: { NODE_EXTRA_CA_CERTS: receiver.caPath },
  });
});
afterAll(async () => {
  await cluster?.stop();
  await receiver?.close();
});


it('the leading controller killed with deliveries due: the other replica delivers every event, duplicates share their webhook-id', async () => {
  const { api, webhookSecret } = await cluster.newKey();
  const chain = 'base';
  const counter = cluster.devnet.chain(chain).testContracts.counter;
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) {
    const res = await api.post('/execute', {
      agent_id: `hook-agent-${i % 4}`,
      chain,
      target_contract: counter,
      calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
      value: '0',
      callback_url: `${receiver.origin}/hooks/${i}`,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids.push(res.body.request_id);
  }
  const statuses = await Promise.all(ids.map((id) => api.waitForTerminal(id, 60_000)));
  expect(statuses.map((s) => s.status)).toEqual(ids.map(() => 'confirmed'));

  // Every request has been tried and is waiting for its retry: deliveries due when the leader dies.
  const get = (id: string) => cluster.store.get('ExecutionRequest', id);
  await until('every delivery retrying', async () => {
    const all = await Promise.all(ids.map(get));
    return all.every((r) => r.status?.webhookEvents?.[0]?.state === 'Retrying') ? true : undefined;
  });
  const leaderName = await until('a leader', () => cluster.leader());
  const leader = cluster.controllers.find((c) => c.name === leaderName)!;
  leader.child.kill('SIGKILL');
  await leader.exited;
  failing = false;

  const next = await until('the other replica to lead', async () => {
    const l = await cluster.leader();
    return l !== undefined && l !== leaderName ? l : undefined;
  });
  expect(next).not.toBe(leaderName);
  const delivered: ExecutionRequest[] = await until('every delivery Delivered', async () => {
    const all = await Promise.all(ids.map(get));
    return all.every((r) => r.status?.webhookEvents?.[0]?.state === 'Delivered') ? all : undefined;
  });

  const byId = new Map<string, string[]>();
  for (const d of receiver.received) {
    const headers = Object.fromEntries(Object.entries(d.headers).map(([k, v]) => [k, String(v)]));
    new Webhook(webhookSecret).verify(d.body, headers); // every attempt, before and after the kill
    byId.set(headers['webhook-id']!, [...(byId.get(headers['webhook-id']!) ?? []), d.body]);
  }
  expect([...byId.keys()].sort()).toEqual(ids.map((id) => `evt_${id}`).sort());
  for (const [id, bodies] of byId) {
    expect(bodies.length, id).toBeGreaterThanOrEqual(2); // the failed attempt(s) before the kill, the one after
    expect(new Set(bodies).size, id).toBe(1);
  }
  for (const r of delivered) {
    // Every attempt is counted when claimed, before it is sent: one the kill cut short may never have arrived.
    const arrived = byId.get(r.status!.webhookEvents![0]!.id)!.length;
    expect(r.status!.webhookEvents![0]!.attempts).toBeGreaterThanOrEqual(arrived);
    expect(r.status!.webhookEvents![0]!.attempts).toBeLessThanOrEqual(arrived + 1);
  }

  // kubectl get exr -o wide shows the delivery state.
  const kubectl = join(await kubeBinDir(), 'kubectl');
  const wide = await run(kubectl, ['--kubeconfig', cluster.kubeconfigPath, '-n', cluster.namespace, 'get', 'exr', ids[0]!, '-o', 'wide']);
  expect(wide.code, wide.stderr).toBe(0);
  // kubectl aligns columns; an empty one (Action, for POST /execute) is blank, so read the column where its header is.
  const [header, row] = wide.stdout.split('\n');
  const at = header!.indexOf('WEBHOOK');
  expect(row!.slice(at).split(/\s+/)[0]).toBe('Delivered');
}, 180_000);

it('with the operator setting in the config (development), a plain http:// receiver on the same machine gets its event', async () => {
  const { api, webhookSecret } = await cluster.newKey();
  const got: { headers: Record<string, string>; body: string }[] = [];
  const plain = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])), body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  try {
    const res = await api.post('/execute', {
      agent_id: 'plain-http-agent',
      chain: 'base',
      target_contract: cluster.devnet.chain('base').testContracts.counter,
      calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
      value: '0',
      callback_url: `http://127.0.0.1:${(plain.address() as AddressInfo).port}/hooks`,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await api.waitForTerminal(res.body.request_id, 60_000)).status).toBe('confirmed');
    await until('the plain http delivery', async () => (got.length > 0 ? true : undefined));
    const event = new Webhook(webhookSecret).verify(got[0]!.body, got[0]!.headers) as { id: string };
    expect(event.id).toBe(`evt_${res.body.request_id}`);
  } finally {
    await new Promise((resolve) => plain.close(resolve));
  }
}, 120_000);
