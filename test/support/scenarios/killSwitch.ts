/**
 * The kill switch on requests already signed, the same in both layouts: operations waiting in the built-in bundler
 * are withdrawn and their requests fail with agent_suspended (nothing of theirs reaches the chain); one a bundle
 * transaction already carried finishes; after a resume the wallet's next operation takes the freed nonce. Under load,
 * every request is confirmed or agent_suspended, and in nonce order everything sent precedes everything withdrawn.
 */
import { encodeFunctionData } from 'viem';
import { expect } from 'vitest';
import { API_VERSION, isTerminal, type AgentPolicy, type ExecutionRequest } from '../../../src/api/v1alpha1/index.ts';
import { counterAbi } from '../../../src/devnet/contracts.ts';
import type { ScenarioService } from '../service.ts';

const chain = 'base';
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers read loosely in tests

/**
 * A fresh agent under a policy of its own, the policy seen by the gateway, its wallet deployed by a first request
 * (so the operations the scenario holds are plain ones), and the counter's value after it.
 */
async function armedAgent(svc: ScenarioService, prefix: string) {
  const tag = Date.now().toString(36);
  const agent = `${prefix}-${tag}`;
  const { counter } = svc.devnet.chain(chain).testContracts;
  const client = svc.devnet.publicClient(chain);
  const body = { agent_id: agent, chain, target_contract: counter, calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }), value: '0' };
  const counterValue = () => client.readContract({ address: counter, abi: counterAbi, functionName: 'number' });
  const { api, clientId } = await svc.newKey('sponsored');
  const policy = await agentPolicy(svc, clientId, agent);
  await expect.poll(async () => (await api.post('/policy/evaluate', body)).body.decision, { timeout: 10_000, interval: 50 }).toBe('allow');
  const warm = await api.post('/execute', body);
  expect((await api.waitForTerminal(warm.body.request_id, 30_000)).status).toBe('confirmed');
  return { agent, client, body, counterValue, api, policy, warmId: warm.body.request_id as string, before: await counterValue() };
}

async function agentPolicy(svc: ScenarioService, clientId: string, agent: string) {
  const namespace = (await svc.store.get('ApiClient', clientId)).metadata.namespace;
  const name = `${clientId}-${agent}`.slice(0, 63);
  await svc.store.create({
    apiVersion: API_VERSION,
    kind: 'AgentPolicy',
    metadata: { name, namespace },
    spec: { apiClient: clientId, agents: { match: 'exact', agentId: agent }, suspended: false, rules: [{ name: 'all', action: 'accept' }] },
  });
  const setSuspended = async (suspended: boolean) => {
    const p: AgentPolicy = await svc.store.get('AgentPolicy', name, namespace);
    await svc.store.update({ ...p, spec: { ...p.spec, suspended } });
  };
  return { name, setSuspended };
}

const requestsOf = async (svc: ScenarioService, agent: string): Promise<ExecutionRequest[]> =>
  (await svc.store.list('ExecutionRequest')).items.filter((r) => r.spec.agentId === agent);
const byId = (all: ExecutionRequest[], id: string) => all.find((r) => r.metadata.name === id)!;
const policyAllowed = (r: ExecutionRequest) => r.status?.conditions?.find((c) => c.type === 'PolicyAllowed');
const queuedTime = (r: ExecutionRequest) => r.status?.history?.find((h) => h.phase === 'Queued')?.time;

/** Operations held in the built-in bundler (automine paused) are withdrawn; the one carried finishes; the nonce is reused. */
export async function killSwitchHeldScenario(svc: ScenarioService): Promise<void> {
  const { agent, client, body, counterValue, api, policy, before } = await armedAgent(svc, 'ks-held');
  const rpc = (method: string, params: unknown[] = []) => client.request({ method: method as never, params: params as never });

  let carried: string;
  let held: string[];
  await rpc('evm_setAutomine', [false]);
  try {
    const first = await api.post('/execute', body);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    carried = first.body.request_id;
    // Its bundle transaction waits in the node's mempool: the wallet is busy, its next operations wait in the bundler.
    await expect.poll(async () => Number(((await rpc('txpool_status')) as { pending: string }).pending), { timeout: 20_000, interval: 25 }).toBeGreaterThanOrEqual(1);
    const rest = await Promise.all(Array.from({ length: 4 }, () => api.post('/execute', body)));
    for (const r of rest) expect(r.status, JSON.stringify(r.body)).toBe(200);
    held = rest.map((r) => r.body.request_id as string);
    await expect
      .poll(async () => (await requestsOf(svc, agent)).filter((r) => held.includes(r.metadata.name) && r.status?.phase === 'Broadcasting').length, { timeout: 20_000, interval: 50 })
      .toBe(held.length);

    await policy.setSuspended(true);
    for (const id of held) {
      const end = await api.waitForTerminal(id, 30_000);
      expect([end.status, end.failure?.code, end.failure?.policy?.name, end.tx_hash], id).toEqual(['failed', 'agent_suspended', policy.name, null]);
    }
    // The carried one is left to finish, and says why.
    await expect
      .poll(async () => policyAllowed(byId(await requestsOf(svc, agent), carried))?.reason, { timeout: 10_000, interval: 50 })
      .toBe('SentBeforeSuspension');
  } finally {
    await rpc('evm_setAutomine', [true]);
    await rpc('evm_mine');
  }
  expect((await api.waitForTerminal(carried, 30_000)).status).toBe('confirmed');
  // Nothing of the withdrawn ones reached the chain: the counter moved by the carried operation alone.
  expect(await counterValue()).toBe(before + 1n);
  const all = await requestsOf(svc, agent);
  const nonceOf = (id: string) => BigInt(byId(all, id).status!.userOperation!.nonce);
  expect(held.map(nonceOf).sort((a, b) => (a < b ? -1 : 1))).toEqual([1n, 2n, 3n, 4n].map((d) => nonceOf(carried) + d));

  // Resumed: the next request confirms with the lowest freed nonce.
  await policy.setSuspended(false);
  await expect.poll(async () => (await api.post('/policy/evaluate', body)).body.decision, { timeout: 10_000, interval: 50 }).toBe('allow');
  const next = await api.post('/execute', body);
  expect(next.status, JSON.stringify(next.body)).toBe(200);
  expect((await api.waitForTerminal(next.body.request_id, 30_000)).status).toBe('confirmed');
  const resumed = byId(await requestsOf(svc, agent), next.body.request_id);
  expect(BigInt(resumed.status!.userOperation!.nonce)).toBe(nonceOf(carried) + 1n);
  expect(await counterValue()).toBe(before + 2n);
}

/**
 * Under load: many requests of one agent in flight, then the switch. Each ends confirmed (its operation was sent
 * before the switch was seen) or agent_suspended; by nonce, every confirmed one precedes every withdrawn one; the
 * chain ran exactly the confirmed ones; nothing was signed after the controller's last decision for the switch.
 */
export async function killSwitchUnderLoadScenario(svc: ScenarioService, n = 30): Promise<void> {
  const { agent, client, body, counterValue, api, policy, warmId, before } = await armedAgent(svc, 'ks-load');

  // The chain mines on demand (automine off), so the test knows what each bundle carries: a first request's bundle
  // waits in the node's mempool while a stream of requests keeps coming; one block includes it and the bundler sends
  // the next bundle with everything signed meanwhile; requests signed after that wait in the bundler; then the switch,
  // with the stream still coming.
  const rpc = (method: string, params: unknown[] = []) => client.request({ method: method as never, params: params as never });
  const pending = async () => Number(((await rpc('txpool_status')) as { pending: string }).pending);
  const posted: Promise<{ status: number; body: Json }>[] = [];
  let stop = false;
  let stream: Promise<void> | undefined;
  await rpc('evm_setAutomine', [false]);
  try {
    posted.push(api.post('/execute', body));
    await expect.poll(pending, { timeout: 20_000, interval: 20 }).toBeGreaterThanOrEqual(1);
    stream = (async () => {
      for (let i = 1; i < n && !stop; i++) {
        posted.push(api.post('/execute', body));
        await new Promise((r) => setTimeout(r, 15));
      }
    })();
    // Signed (and handed to the bundler right after: Broadcasting is written only once that has lasted a second).
    const signed = async () => (await requestsOf(svc, agent)).filter((r) => r.status?.userOperation !== undefined && !isTerminal(r.status.phase)).length;
    await expect.poll(signed, { timeout: 20_000, interval: 20 }).toBeGreaterThanOrEqual(6);
    await rpc('evm_mine'); // the first bundle is included; the next one carries what was signed meanwhile
    const mined = new Date().toISOString();
    await expect.poll(pending, { timeout: 20_000, interval: 20 }).toBeGreaterThanOrEqual(1);
    const signedSince = async () => (await requestsOf(svc, agent)).filter((r) => (queuedTime(r) ?? '') > mined).length;
    await expect.poll(signedSince, { timeout: 20_000, interval: 20 }).toBeGreaterThanOrEqual(3);
    await policy.setSuspended(true);
    // The chain stays held until the controller has judged every request (the stream goes on meanwhile: refused at
    // the gateway, or failed unsigned): each has ended, or is found carried by a bundle (SentBeforeSuspension). The
    // policy watch re-queues the signed ones at once; without it they would wait for their next poll (15 s).
    const undecided = async () =>
      (await requestsOf(svc, agent)).filter((r) => !['Confirmed', 'Failed'].includes(r.status?.phase ?? '') && policyAllowed(r)?.reason !== 'SentBeforeSuspension').length;
    await expect.poll(undecided, { timeout: 10_000, interval: 50 }).toBe(0);
  } finally {
    stop = true;
    await stream;
    await rpc('evm_setAutomine', [true]);
    await rpc('evm_mine');
  }
  const answers = await Promise.all(posted);
  // Refused at the gateway (403) once its cache has the switch: nothing created. The rest were accepted.
  const accepted = answers.filter((a) => a.status === 200).map((a) => a.body.request_id as string);
  for (const a of answers) if (a.status !== 200) expect([a.status, a.body.error], JSON.stringify(a.body)).toEqual([403, 'agent_suspended']);
  const ends = await Promise.all(accepted.map((id) => api.waitForTerminal(id, 60_000)));
  for (const e of ends) expect(e.status === 'confirmed' || (e.status === 'failed' && e.failure?.code === 'agent_suspended'), JSON.stringify(e)).toBe(true);

  const all = (await requestsOf(svc, agent)).filter((r) => accepted.includes(r.metadata.name));
  const confirmed = all.filter((r) => r.status?.phase === 'Confirmed');
  // The second bundle was pending at the switch: its requests were judged sent (re-queued by the policy watch) and confirmed.
  const found = all.filter((r) => policyAllowed(r)?.reason === 'SentBeforeSuspension');
  expect(found.length).toBeGreaterThan(0);
  for (const r of found) expect(r.status?.phase, r.metadata.name).toBe('Confirmed');
  const suspended = all.filter((r) => r.status?.phase === 'Failed');
  expect(suspended.length).toBeGreaterThan(0);
  const withdrawn = suspended.filter((r) => r.status?.userOperation !== undefined).length;
  expect(withdrawn, 'the requests signed after the second bundle was sent').toBeGreaterThanOrEqual(3);
  console.info(`kill switch under load: ${answers.length - accepted.length} refused at the gateway, ${confirmed.length} confirmed, ${withdrawn} withdrawn after signing, ${suspended.length - withdrawn} failed unsigned`);
  const nonce = (r: ExecutionRequest) => BigInt(r.status!.userOperation!.nonce);
  const confirmedNonces = confirmed.map(nonce).sort((a, b) => (a < b ? -1 : 1));
  const warmNonce = BigInt(byId(await requestsOf(svc, agent), warmId).status!.userOperation!.nonce);
  // The confirmed ones hold the nonces right after the warm-up's, without a hole; every signed one that failed lies above them.
  expect(confirmedNonces).toEqual(confirmedNonces.map((_, i) => warmNonce + 1n + BigInt(i)));
  const top = warmNonce + BigInt(confirmed.length);
  for (const r of suspended) if (r.status?.userOperation) expect(nonce(r)).toBeGreaterThan(top);
  // The chain ran exactly the confirmed ones.
  expect(await counterValue()).toBe(before + BigInt(confirmed.length));
  // Nothing was signed after the controller's last agent_suspended decision.
  const lastDecision = suspended.map((r) => Date.parse(r.status!.completionTime!)).reduce((a, b) => Math.max(a, b));
  for (const r of all) {
    const q = queuedTime(r);
    if (q !== undefined) expect(Date.parse(q), r.metadata.name).toBeLessThanOrEqual(lastDecision);
  }
  // Resumed: the next request takes the nonce after the last confirmed one (the withdrawn ones' were freed).
  await policy.setSuspended(false);
  await expect.poll(async () => (await api.post('/policy/evaluate', body)).body.decision, { timeout: 10_000, interval: 50 }).toBe('allow');
  const next = await api.post('/execute', body);
  expect((await api.waitForTerminal(next.body.request_id, 30_000)).status).toBe('confirmed');
  expect(nonce(byId(await requestsOf(svc, agent), next.body.request_id))).toBe(top + 1n);
}
