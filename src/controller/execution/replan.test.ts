import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bumpWords, DEADLINE_FAMILY_KEY, deadlineFamily } from '../../../test/support/deadlineFamily.ts';
import type { ExecutionRequest } from '../../api/v1alpha1/index.ts';
import { chainUnderTest, freshSecret } from '../../../test/support/chainUnderTest.ts';
import { createChainWorker, type LocalChainWorker } from '../../chain/worker/index.ts';
import { executionRequest } from '../../gateway/testing/harness.ts';
import { protocolActionOf } from '../../protocols/action.ts';
import { FAMILIES } from '../../protocols/index.ts';
import type { ActionEndpoint, AnyFamily } from '../../protocols/types.ts';
import { replanAtSigning } from './replan.ts';

describe('re-planning an action at signing (devnet worker)', () => {
  const env = chainUnderTest('base');
  let worker: LocalChainWorker;
  const protocols = new Map([['base' as const, { [DEADLINE_FAMILY_KEY]: { counter: env.counter } } as never]]);
  const families = [...FAMILIES, deadlineFamily];
  beforeAll(async () => {
    worker = await createChainWorker(env.config, { serviceSecret: freshSecret() });
  });
  afterAll(async () => {
    await worker?.close();
  });

  /** A request of `family`'s bump as the gateway stores it: the first plan's calls and bound. */
  const accepted = async (family: AnyFamily, input: Record<string, unknown>): Promise<ExecutionRequest> => {
    const endpoint = family.endpoints[0] as ActionEndpoint<never>;
    const parsed = endpoint.input.parse(input);
    const now = (await worker.getHead()).timestamp;
    const first = await endpoint.plan({ config: { counter: env.counter }, now: async () => now } as never, parsed as never);
    const req = executionRequest('replan', 'c0ffee01');
    return { ...req, spec: { ...req.spec, calls: first.calls, action: protocolActionOf(family, endpoint, parsed, first) } };
  };
  const bump = deadlineFamily.endpoints[0] as ActionEndpoint<never>;

  it('plans from the stored input: the chain read now, the stored deadline kept', async () => {
    const req = await accepted(deadlineFamily, { agent_id: 'a', by: '2', deadline_seconds: '60' });
    const stored = BigInt(req.spec.action!.input['deadline'] as string);
    await env.client.request({ method: 'evm_mine', params: [] } as never);
    await new Promise((r) => setTimeout(r, 1_100));
    await env.client.request({ method: 'evm_mine', params: [] } as never);
    const out = await replanAtSigning(req, worker, { protocols, families });
    expect(out.kind).toBe('replanned');
    const words = bumpWords((out as { calls: { data: string }[] }).calls[0]!.data);
    expect(words.deadline).toBe(stored);
    expect(words.plannedAt).toBeGreaterThan(bumpWords(req.spec.calls[0]!.data).plannedAt);
  });

  it('refuses a plan that moves a stored bound: nothing is signed (bounds_changed)', async () => {
    // A family that recomputes its deadline instead of keeping the stored one.
    const loose = {
      ...deadlineFamily,
      endpoints: [{ ...deadlineFamily.endpoints[0]!, plan: (ctx: never, input: Record<string, unknown>) => bump.plan(ctx, { ...input, deadline: undefined } as never) }],
    } as AnyFamily;
    const req = await accepted(loose, { agent_id: 'a', by: '2', deadline_seconds: '60' });
    await new Promise((r) => setTimeout(r, 1_100));
    await env.client.request({ method: 'evm_mine', params: [] } as never);
    const out = await replanAtSigning(req, worker, { protocols, families: [loose] });
    expect(out).toMatchObject({ kind: 'refused', failure: { code: 'bounds_changed' } });
  });

  it('leaves alone a request without an action, and an action whose family signs what it accepted', async () => {
    expect(await replanAtSigning(executionRequest('plain', 'c0ffee01'), worker, { protocols, families })).toEqual({ kind: 'as_accepted' });
    const lending = executionRequest('lend', 'c0ffee01');
    const action = { name: 'lend-b-v3/supply', input: { agent_id: 'a', token: 'USDC', amount: '1' }, inputHash: 'ab'.repeat(32) };
    expect(await replanAtSigning({ ...lending, spec: { ...lending.spec, action } }, worker, { protocols, families })).toEqual({ kind: 'as_accepted' });
  });
});
