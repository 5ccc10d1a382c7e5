/**
 * The same corpus against a real kube-apiserver with crds/ applied: its verdicts and stored objects must be
 * the ones apiServerModel.ts predicts, so the fast agreement test (zod vs the model) speaks for the server.
 * Also checks what `kubectl get exr` prints with the printer columns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiException, CustomObjectsApi } from '@kubernetes/client-node';
import { startKubeApiServer, type KubeApiServer } from '../../../../test/support/kubeApiServer.ts';
import { GROUP, VERSION } from '../meta.ts';
import { SCHEME } from '../scheme.ts';
import { customResourceDefinition } from './definitions.ts';
import { admit } from './testing/apiServerModel.ts';
import { disagreements, invalidCases, validCases, type Case } from './testing/corpus.ts';

const NAMESPACE = 'agents';
let kube: KubeApiServer;
let api: CustomObjectsApi;

beforeAll(async () => {
  kube = await startKubeApiServer({ namespaces: [NAMESPACE] });
  api = kube.kubeConfig().makeApiClient(CustomObjectsApi);
}, 180_000);
afterAll(() => kube?.stop());

type Verdict = { ok: true; object: Record<string, unknown> } | { ok: false; error: string };

/** Creates the object (spec), then writes its status through /status, as the service does. */
async function serverVerdict(c: Case, name: string): Promise<Verdict> {
  const { status, metadata: _, ...rest } = c.object as Record<string, unknown>;
  const target = { group: GROUP, version: VERSION, namespace: NAMESPACE, plural: SCHEME[c.kind].plural };
  try {
    let stored = await api.createNamespacedCustomObject({ ...target, body: { ...rest, metadata: { name } } });
    if ('status' in (c.object as object)) {
      stored = await api.replaceNamespacedCustomObjectStatus({ ...target, name, body: { ...stored, status } });
    }
    return { ok: true, object: stored };
  } catch (e) {
    if (e instanceof ApiException && (e.code === 422 || e.code === 400)) return { ok: false, error: String(e.body) };
    throw e;
  }
}

const content = (o: Record<string, unknown>) => {
  const { metadata: _, ...rest } = o;
  return rest;
};

describe('kube-apiserver judges and stores the corpus as the model says', () => {
  const all = [...validCases(), ...invalidCases(), ...disagreements()];
  it.each(all.map((c, i) => [c.name, c, i] as const))('%s', async (_, c, i) => {
    const model = admit(customResourceDefinition(c.kind).spec.versions[0]!.schema.openAPIV3Schema, c.object);
    const server = await serverVerdict(c, `case-${i}`);
    expect(server.ok, server.ok ? '' : server.error).toBe(model.ok);
    if (server.ok && model.ok) expect(content(server.object)).toEqual(content(model.object));
  });
});

describe('kubectl get', () => {
  it('shows the ExecutionRequest columns, the Reason and webhook delivery columns with -o wide', async () => {
    const confirmed = validCases().find((c) => c.name === 'ExecutionRequest at Confirmed')!;
    expect((await serverVerdict(confirmed, 'columns')).ok).toBe(true);
    const plain = await kube.kubectl(['-n', NAMESPACE, 'get', 'exr', 'columns']);
    expect(plain.code, plain.stderr).toBe(0);
    const [header, row] = plain.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/));
    expect(header).toEqual(['NAME', 'PHASE', 'CHAIN', 'AGENT', 'ACTION', 'ORDER', 'TX', 'AGE']);
    // A lending action creates no order a keeper settles: its Order column is blank (no word in the row).
    expect(row?.slice(0, 6)).toEqual(['columns', 'Confirmed', 'base', 'agent-7', 'lend-b-v3/borrow', `0x${'99'.repeat(32)}`]);

    const wide = await kube.kubectl(['-n', NAMESPACE, 'get', 'executionrequests', 'columns', '-o', 'wide']);
    const [wideHeader, wideRow] = wide.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/));
    expect(wideHeader).toEqual(['NAME', 'PHASE', 'REASON', 'CHAIN', 'AGENT', 'ACTION', 'ORDER', 'CLIENT', 'TX', 'WALLET', 'WEBHOOK', 'ATTEMPTS', 'AGE']);
    expect(wideRow?.[2]).toBe('Confirmed');
    expect(wideRow?.slice(9, 11)).toEqual(['Delivered', '2']);

    const category = await kube.kubectl(['-n', NAMESPACE, 'get', 'agentwallet', '-o', 'name']);
    expect(category.stdout).toContain('executionrequest.agentwallet.dev/columns');
  });
});
