import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/env.ts';
import { DEFAULT_NAMESPACE as NS } from '../api/v1alpha1/index.ts';
import { createKey } from '../keys/manage.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { applyPolicy, deletePolicy, getPolicy, listPolicies, PolicyError, setSuspended } from './manage.ts';

const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

describe('policy management', () => {
  let store: EmbeddedStore;
  let client: string;
  let other: string;

  beforeAll(async () => {
    store = await openEmbeddedStore({ dir: `${tempDir('aw-policy-')}/store` });
    client = (await createKey(store, { mode: 'sponsored' })).key.id;
    other = (await createKey(store, { mode: 'sponsored' })).key.id;
  });
  afterAll(async () => {
    await store.close();
  });

  /** The PolicyError a call fails with, as `code: message`. */
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => expect.unreachable('should be refused'),
      (e: unknown) => {
        if (!(e instanceof PolicyError)) throw e;
        return `${e.code}: ${e.shortMessage}`;
      },
    );

  const transfersOnly = (apiClient: string) => ({
    apiClient,
    agents: { match: 'exact', agentId: 'bot-1' },
    rules: [
      { name: 'usdc-transfer', action: 'accept', chains: ['base'], targets: [USDC], function: { signature: 'transfer(address to, uint256 amount)', args: [{ field: 'amount', lte: '1000000' }] } },
    ],
  });

  it('creates a policy, then replaces its spec keeping its metadata; get answers what was written', async () => {
    const first = await applyPolicy(store, NS, { name: 'bot-1-usdc', spec: transfersOnly(client) });
    expect(first).toMatchObject({ created: true, policy: { name: 'bot-1-usdc', api_client: client, suspended: false, rules: 1, generation: 1 } });
    const stored = await store.get('AgentPolicy', 'bot-1-usdc', NS);

    const spec = { ...transfersOnly(client), validUntil: '2030-01-01T00:00:00Z', rules: [...transfersOnly(client).rules, { name: 'no-approvals', action: 'reject', approval: {} }] };
    const second = await applyPolicy(store, NS, { name: 'bot-1-usdc', spec });
    expect(second).toMatchObject({ created: false, policy: { rules: 2, valid_until: '2030-01-01T00:00:00Z', generation: 2 } });
    const after = await store.get('AgentPolicy', 'bot-1-usdc', NS);
    expect(after.metadata.uid).toBe(stored.metadata.uid);
    expect(after.metadata.creationTimestamp).toBe(stored.metadata.creationTimestamp);
    expect(await getPolicy(store, NS, 'bot-1-usdc')).toEqual({ name: 'bot-1-usdc', spec: { ...spec, suspended: false } });
  });

  it('lists the namespace’s policies, or one key’s', async () => {
    await applyPolicy(store, NS, { name: 'other-key-level', spec: { apiClient: other, rules: [{ name: 'base-only', action: 'accept', chains: ['base'] }] } });
    expect((await listPolicies(store, NS)).map((p) => p.name)).toEqual(['bot-1-usdc', 'other-key-level']);
    expect(await listPolicies(store, NS, { apiClient: other })).toEqual([expect.objectContaining({ name: 'other-key-level', api_client: other, agents: undefined })]);
    expect(await listPolicies(store, NS, { apiClient: 'nosuchkey' })).toEqual([]);
  });

  it('refuses a policy of a key that does not exist', async () => {
    expect(await refusal(applyPolicy(store, NS, { name: 'orphan', spec: transfersOnly('nosuchkey0000000') }))).toMatch(/^unknown_api_client: .*nosuchkey0000000/);
    expect(await refusal(applyPolicy(store, NS, { name: 'orphan', spec: transfersOnly('Not A Name') }))).toMatch(/^unknown_api_client/);
    await expect(store.get('AgentPolicy', 'orphan', NS)).rejects.toMatchObject({ code: 'NotFound' });
  });

  it('refuses a rule that cannot be applied, naming it, and stores nothing', async () => {
    const badSignature = { apiClient: client, rules: [{ name: 'ok', action: 'accept' }, { name: 'broken-sig', action: 'accept', function: { signature: 'transfer(address to, uint256' } }] };
    expect(await refusal(applyPolicy(store, NS, { name: 'bad', spec: badSignature }))).toMatch(/^invalid_policy: rule "broken-sig": .*not a function signature/);
    const noSuchArg = { apiClient: client, rules: [{ name: 'wrong-arg', action: 'accept', function: { signature: 'transfer(address to, uint256 amount)', args: [{ field: 'value', lt: '1' }] } }] };
    expect(await refusal(applyPolicy(store, NS, { name: 'bad', spec: noSuchArg }))).toMatch(/^invalid_policy: rule "wrong-arg": transfer has no argument "value"/);
    const badTarget = { apiClient: client, rules: [{ name: 'bad-target', action: 'accept', targets: ['0x12'] }] };
    expect(await refusal(applyPolicy(store, NS, { name: 'bad', spec: badTarget }))).toMatch(/^invalid_policy: rule "bad-target": spec\.rules\.0\.targets\.0/);
    await expect(store.get('AgentPolicy', 'bad', NS)).rejects.toMatchObject({ code: 'NotFound' });
  });

  it('refuses duplicate rule names, an empty validity window, a bad name, an agent id the API refuses, a misspelt field', async () => {
    const twice = { apiClient: client, rules: [{ name: 'same', action: 'accept' }, { name: 'same', action: 'reject', chains: ['base'] }] };
    expect(await refusal(applyPolicy(store, NS, { name: 'dup', spec: twice }))).toMatch(/^invalid_policy: rule "same" is named twice/);
    const window = { apiClient: client, validFrom: '2030-01-01T00:00:00Z', validUntil: '2029-01-01T00:00:00Z' };
    expect(await refusal(applyPolicy(store, NS, { name: 'window', spec: window }))).toMatch(/^invalid_policy: spec\.validFrom .* must be before spec\.validUntil/);
    for (const name of ['Bot-1', 'a_b', '', 'x'.repeat(254), '-x']) {
      expect([name, await refusal(applyPolicy(store, NS, { name, spec: { apiClient: client } }))]).toEqual([name, expect.stringMatching(/^invalid_policy: name /)]);
    }
    const control = { apiClient: client, agents: { match: 'prefix', agentId: 'team\u0001' } };
    expect(await refusal(applyPolicy(store, NS, { name: 'ctl', spec: control }))).toMatch(/^invalid_policy: spec\.agents\.agentId/);
    const misspelt = { apiClient: client, rule: [{ name: 'x', action: 'accept' }] };
    expect(await refusal(applyPolicy(store, NS, { name: 'typo', spec: misspelt }))).toBe('invalid_policy: spec.rule is not a field of a policy');
    const deepTypo = { apiClient: client, rules: [{ name: 'x', action: 'accept', value: { lessThan: '1' } }] };
    expect(await refusal(applyPolicy(store, NS, { name: 'typo', spec: deepTypo }))).toBe('invalid_policy: spec.rules.0.value.lessThan is not a field of a policy');
    expect(await refusal(applyPolicy(store, NS, { name: 'x', spec: { apiClient: client }, extra: 1 }))).toMatch(/^invalid_policy: a policy is/);
    expect(await refusal(applyPolicy(store, NS, { name: 'x' }))).toMatch(/^invalid_policy: a policy is .*: spec: .*expected object/);
    expect((await listPolicies(store, NS)).map((p) => p.name)).toEqual(['bot-1-usdc', 'other-key-level']);
  });

  it('suspends and resumes a policy (the kill switch), each once, keeping the rest of its spec', async () => {
    const before = await getPolicy(store, NS, 'bot-1-usdc');
    expect(await setSuspended(store, NS, 'bot-1-usdc', true)).toMatchObject({ name: 'bot-1-usdc', suspended: true });
    const suspended = await store.get('AgentPolicy', 'bot-1-usdc', NS);
    expect(suspended.spec).toEqual({ ...before.spec, suspended: true });
    // Suspending again writes nothing.
    await setSuspended(store, NS, 'bot-1-usdc', true);
    expect((await store.get('AgentPolicy', 'bot-1-usdc', NS)).metadata.resourceVersion).toBe(suspended.metadata.resourceVersion);
    expect(await setSuspended(store, NS, 'bot-1-usdc', false)).toMatchObject({ suspended: false });
    expect((await getPolicy(store, NS, 'bot-1-usdc')).spec).toEqual(before.spec);
    expect(await refusal(setSuspended(store, NS, 'nope', true))).toMatch(/^policy_not_found/);
  });

  it('applying a document without `suspended` keeps a suspension; one that says it sets it', async () => {
    await setSuspended(store, NS, 'bot-1-usdc', true);
    await applyPolicy(store, NS, { name: 'bot-1-usdc', spec: transfersOnly(client) });
    expect((await getPolicy(store, NS, 'bot-1-usdc')).spec.suspended).toBe(true);
    await applyPolicy(store, NS, { name: 'bot-1-usdc', spec: { ...transfersOnly(client), suspended: false } });
    expect((await getPolicy(store, NS, 'bot-1-usdc')).spec.suspended).toBe(false);
  });

  it('a suspension racing an edit of the policy keeps both', async () => {
    const [, suspended] = await Promise.all([
      applyPolicy(store, NS, { name: 'other-key-level', spec: { apiClient: other, rules: [{ name: 'arbitrum-only', action: 'accept', chains: ['arbitrum'] }] } }),
      setSuspended(store, NS, 'other-key-level', true),
    ]);
    expect(suspended.suspended).toBe(true);
    const p = await store.get('AgentPolicy', 'other-key-level', NS);
    // Whichever wrote last wrote on what the other had written (a resourceVersion precondition, retried on Conflict).
    expect(p.spec).toMatchObject({ suspended: true, rules: [expect.objectContaining({ name: 'arbitrum-only' })] });
  });

  it('deletes a policy; an unknown one is policy_not_found', async () => {
    expect(await deletePolicy(store, NS, 'other-key-level')).toEqual({ name: 'other-key-level' });
    expect((await listPolicies(store, NS)).map((p) => p.name)).toEqual(['bot-1-usdc']);
    expect(await refusal(deletePolicy(store, NS, 'other-key-level'))).toMatch(/^policy_not_found/);
    expect(await refusal(getPolicy(store, NS, 'Not/A/Name'))).toMatch(/^policy_not_found/);
  });
});
