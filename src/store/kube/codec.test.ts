import { describe, expect, it } from 'vitest';
import { API_VERSION } from '../../api/v1alpha1/index.ts';
import { evaluatePolicies } from '../../policy/index.ts';
import { decode } from './codec.ts';

const raw = (spec: Record<string, unknown>) => ({ apiVersion: API_VERSION, kind: 'AgentPolicy', metadata: { name: 'p', namespace: 'ns', resourceVersion: '7' }, spec });

describe('decode of an AgentPolicy the schema refuses', () => {
  it('is read fail closed: its scope and kill switch kept, no rules, why in status.unreadable', () => {
    const p = decode('AgentPolicy', raw({ apiClient: 'key1', agents: { match: 'exact', agentId: 'bot' }, suspended: true, rules: [{ name: 'x', action: 'maybe' }] }));
    expect(p.spec).toEqual({ apiClient: 'key1', agents: { match: 'exact', agentId: 'bot' }, suspended: true, rules: [] });
    expect(p.metadata).toMatchObject({ name: 'p', resourceVersion: '7' });
    expect(p.status?.unreadable).toMatch(/^spec\.rules\.0\.action: /);
  });

  it('covers every agent of the key when its agents cannot be read either, and refuses naming why', () => {
    const p = decode('AgentPolicy', raw({ apiClient: 'key1', agents: { match: 'some' }, budgets: [{ name: 'w', window: '1w', count: 1 }] }));
    expect(p.spec.agents).toBeUndefined();
    const d = evaluatePolicies([p], { apiClient: 'key1', agentId: 'anyone', chain: 'base', calls: [], now: new Date() });
    expect(d).toMatchObject({ allowed: false, code: 'policy_denied', policy: 'p', rule: null });
    expect(!d.allowed && d.message).toMatch(/^policy p as stored cannot be read \(.*spec\.budgets\.0\.window.*\); it accepts nothing until it is fixed$/);
  });

  it('is still refused when not even its key can be read, and other kinds are refused as before', () => {
    expect(() => decode('AgentPolicy', raw({ rules: [] }))).toThrow(/does not match the schema/);
    expect(() => decode('ApiClient', { apiVersion: API_VERSION, kind: 'ApiClient', metadata: { name: 'k' }, spec: {} })).toThrow(/does not match the schema/);
  });
});
