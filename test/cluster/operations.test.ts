/**
 * What an SRE sees of the cluster layout: `kubectl get exr` columns, key management with `keys --kube`,
 * /metrics on every role, and retention: a finished request is archived, deleted, and still answers
 * GET /status.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { isStoreError } from '../../src/store/types.ts';
import { parseApiKey } from '../../src/keys/apiKey.ts';
import { AUDIT_LOG_ENV, startTestCluster, type TestCluster } from '../support/cluster.ts';
import { apiClient } from '../support/http.ts';
import { until } from '../support/until.ts';
import { kubeBinDir } from '../support/kubeApiServer.ts';

const run = promisify(execFile);
const RETENTION_SECONDS = 4;

let cluster: TestCluster;
let kubectlPath: string;
beforeAll(async () => {
  [cluster, kubectlPath] = await Promise.all([
    startTestCluster({ retentionSeconds: RETENTION_SECONDS }),
    kubeBinDir().then((d) => `${d}/kubectl`),
  ]);
});
afterAll(async () => {
  await cluster?.stop();
});

const kubectl = async (...args: string[]) =>
  (await run(kubectlPath, ['--kubeconfig', cluster.kubeconfigPath, '-n', cluster.namespace, ...args])).stdout;

const execute = (api: ReturnType<typeof apiClient>, fn: 'increment' | 'fail') =>
  api.post('/execute', {
    agent_id: 'sre-view',
    chain: 'base',
    target_contract: cluster.devnet.chain('base').testContracts.counter,
    calldata: encodeFunctionData({ abi: counterAbi, functionName: fn }),
    value: '0',
  });

describe('kubectl get executionrequests', () => {
  it('shows Phase, Chain, Agent, Action and Order (empty for POST /execute), Tx and Age; -o wide adds the reason', async () => {
    const { api } = await cluster.newKey();
    const ok = await execute(api, 'increment');
    expect(ok.status).toBe(200);
    const confirmed = await api.waitForTerminal(ok.body.request_id);
    const failed = await execute(api, 'fail'); // refused at simulation: a request with a reason

    const table = await kubectl('get', 'exr');
    const [header, ...rows] = table.trim().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['NAME', 'PHASE', 'CHAIN', 'AGENT', 'ACTION', 'ORDER', 'TX', 'AGE']);
    const row = rows.find((r) => r.startsWith(ok.body.request_id))!;
    expect(row.split(/\s+/).slice(1, 5)).toEqual(['Confirmed', 'base', 'sre-view', confirmed.tx_hash]);

    const wide = await kubectl('get', 'executionrequests', '-o', 'wide');
    expect(wide.split('\n')[0]).toMatch(/\bREASON\b/);
    expect(failed.status).toBe(400);
    const failedId = failed.body.request_id as string;
    expect(wide.split('\n').find((r) => r.startsWith(failedId))).toMatch(/SimulationReverted/);

    // The category lists our kinds together.
    expect(await kubectl('get', 'agentwallet')).toContain(ok.body.request_id);
  });
});

describe('keys --kube', () => {
  it('creates a key as an ApiClient in the namespace, usable at once', async () => {
    const { stdout } = await run(
      process.execPath,
      ['bin/agent-wallet.js', 'keys', 'create', '--kube', '--namespace', cluster.namespace, '--kubeconfig', cluster.kubeconfigPath, '--mode', 'sponsored', '--json'],
    );
    const { api_key } = JSON.parse(stdout) as { api_key: string };
    const wallet = await apiClient(cluster.url, api_key).get('/wallet?agent_id=cli-made&chain=base');
    expect(wallet.status).toBe(200);
    expect(await kubectl('get', 'apiclients', '-o', 'name')).toMatch(/apiclient/);

    // The API server's audit log (deploy/kind/audit-policy.yaml) recorded who created it, and what.
    const keyId = parseApiKey(api_key)!.clientId;
    const created = await auditEntries((e) => e.verb === 'create' && e.objectRef?.resource === 'apiclients' && e.responseObject?.metadata?.name === keyId);
    expect(created).toHaveLength(1);
    expect(created[0]!.objectRef?.namespace).toBe(cluster.namespace);
    expect(created[0]!.user.username).toBe('admin');
    expect(created[0]!.responseObject.spec.keyHash).toMatch(/^[0-9a-f]{64}$/);
    // Reads are not audited: only the writes to keys and policies.
    expect(await auditEntries((e) => e.verb === 'get' || e.verb === 'list' || e.verb === 'watch')).toEqual([]);
  });
});

type AuditEntry = { verb: string; user: { username: string }; objectRef?: { resource?: string; namespace?: string; name?: string }; responseObject?: any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- the API server's JSON
async function auditEntries(match: (e: AuditEntry) => boolean): Promise<AuditEntry[]> {
  const path = process.env[AUDIT_LOG_ENV]!;
  const lines = (await readFile(path, 'utf8')).split('\n').filter((l) => l.trim() !== '');
  return lines.map((l) => JSON.parse(l) as AuditEntry).filter(match);
}

describe('metrics', () => {
  it('every role serves /metrics with its families', async () => {
    const scrape = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const controllerText = await Promise.all(cluster.controllers.map((c) => scrape(c.opsPort)));
    expect(controllerText.some((t) => /^agentwallet_leader\{[^}]*\} 1$/m.test(t))).toBe(true);
    for (const t of controllerText) expect(t).toContain('agentwallet_workqueue_depth');
    expect(await scrape(cluster.gateway.opsPort)).toContain('agentwallet_http_requests_total');
    const worker = await scrape(cluster.workers.get('base')!.opsPort);
    expect(worker).toContain('agentwallet_bundle_operations');
    expect(worker).toContain('agentwallet_lock_wait_seconds');
    // The worker's accounts and its paymaster's deposit, read at its start (src/metrics/balances.ts).
    expect(worker).toMatch(/^agentwallet_account_balance_wei\{chain="base",account="executor-0",address="0x[0-9a-fA-F]{40}"\} [1-9]/m);
    expect(worker).toMatch(/^agentwallet_paymaster_deposit_wei\{chain="base",paymaster="0x[0-9a-fA-F]{40}"\} [1-9]/m);
  });
});

describe('pre-flight checks', () => {
  it('every chain worker runs the doctor on its configuration at start and logs the outcome', async () => {
    for (const [chain, worker] of cluster.workers) {
      const line = await until(`${chain}'s doctor log`, async () =>
        (await readFile(worker.logPath, 'utf8')).split('\n').find((l) => l.includes('"doctor: pre-flight checks done"')),
      );
      expect(JSON.parse(line), chain).toMatchObject({ chain, failed: 0, checks: expect.any(Number) });
    }
  });
});

describe('retention', () => {
  it('archives a finished request, deletes the resource, and GET /status still answers the same', async () => {
    const { api } = await cluster.newKey();
    const res = await execute(api, 'increment');
    const id = res.body.request_id as string;
    const final = await api.waitForTerminal(id);
    const deadline = Date.now() + (RETENTION_SECONDS + 20) * 1000;
    for (;;) {
      const gone = await cluster.store.get('ExecutionRequest', id).then(
        () => false,
        (e: unknown) => isStoreError(e, 'NotFound'),
      );
      if (gone) break;
      if (Date.now() > deadline) throw new Error('the finished request was not deleted after its retention');
      await new Promise((r) => setTimeout(r, 250));
    }
    const after = await api.get(`/status/${id}`);
    expect(after.status).toBe(200);
    expect(after.body).toEqual(final);
    // Another key still cannot read it.
    const other = await cluster.newKey();
    expect((await other.api.get(`/status/${id}`)).status).toBe(404);
  });
});
