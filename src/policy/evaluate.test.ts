import { encodeFunctionData, maxUint256, parseAbi } from 'viem';
import { describe, expect, it } from 'vitest';
import { API_VERSION, type AgentPolicy, type AgentPolicySpec, type Call, type PolicyRule } from '../api/v1alpha1/index.ts';
import { evaluatePolicies, refusedBeforePlanning } from './evaluate.ts';
import type { PolicyFacts } from './facts.ts';

const addr = (b: string) => `0x${b.repeat(20)}` as const;
const TOKEN = addr('11');
const ROUTER = addr('22');
const OTHER = addr('33');
const abi = parseAbi([
  'function transfer(address to, uint256 amount)',
  'function approve(address spender, uint256 amount)',
  'function increaseAllowance(address spender, uint256 addedValue)',
  'function setApprovalForAll(address operator, bool approved)',
  'function approve(address token, address spender, uint160 amount, uint48 expiration)',
]);
const transfer = (to: string, amount: bigint): Call => ({
  target: TOKEN,
  value: '0',
  data: encodeFunctionData({ abi, functionName: 'transfer', args: [to as `0x${string}`, amount] }),
});
const approve = (spender: string, amount: bigint): Call => ({
  target: TOKEN,
  value: '0',
  data: encodeFunctionData({ abi: [abi[1]], functionName: 'approve', args: [spender as `0x${string}`, amount] }),
});
const send = (to: string, wei: bigint): Call => ({ target: to, value: wei.toString(), data: '0x' });

let n = 0;
function policy(spec: Partial<AgentPolicySpec> & { rules?: PolicyRule[] }, name = `p${++n}`): AgentPolicy {
  return {
    apiVersion: API_VERSION,
    kind: 'AgentPolicy',
    metadata: { name, namespace: 'default' },
    spec: { apiClient: 'key1', suspended: false, rules: [], ...spec },
  };
}
const facts = (calls: Call[], more: Partial<PolicyFacts> = {}): PolicyFacts => ({
  apiClient: 'key1',
  agentId: 'bot-1',
  chain: 'base',
  calls,
  now: new Date('2026-11-26T12:00:00Z'),
  ...more,
});
const accept = (name: string, r: Omit<PolicyRule, 'name' | 'action'> = {}): PolicyRule => ({ name, action: 'accept', ...r });
const reject = (name: string, r: Omit<PolicyRule, 'name' | 'action'> = {}): PolicyRule => ({ name, action: 'reject', ...r });
const verdict = (policies: AgentPolicy[], f: PolicyFacts) => {
  const d = evaluatePolicies(policies, f);
  return d.allowed ? 'allowed' : `${d.code}:${d.rule ?? '-'}`;
};

describe('evaluatePolicies', () => {
  it('no policy: allowed, as before policies existed', () => {
    expect(evaluatePolicies([], facts([transfer(OTHER, 1n)]))).toEqual({ allowed: true, policies: [], accepted: [] });
  });

  it('a policy without rules accepts nothing (default deny), and says which call', () => {
    const d = evaluatePolicies([policy({})], facts([transfer(OTHER, 1n)]));
    expect(d).toMatchObject({ allowed: false, code: 'policy_denied', rule: null, callIndex: 0 });
  });

  it('chains: accepts on the chains named only', () => {
    const p = [policy({ rules: [accept('base', { chains: ['base'] })] })];
    expect(verdict(p, facts([send(OTHER, 1n)]))).toBe('allowed');
    expect(verdict(p, facts([send(OTHER, 1n)], { chain: 'arbitrum' }))).toBe('policy_denied:-');
  });

  it('targets and selectors', () => {
    const p = [policy({ rules: [accept('token', { targets: [TOKEN.toUpperCase().replace('0X', '0x')], selectors: ['0xa9059cbb'] })] })];
    expect(verdict(p, facts([transfer(OTHER, 5n)]))).toBe('allowed');
    expect(verdict(p, facts([approve(OTHER, 5n)]))).toBe('policy_denied:-');
    expect(verdict(p, facts([{ ...transfer(OTHER, 5n), target: OTHER }]))).toBe('policy_denied:-');
    // `0x`: a call without data (a plain native transfer).
    const plain = [policy({ rules: [accept('plain', { selectors: ['0x'] })] })];
    expect(verdict(plain, facts([send(OTHER, 1n)]))).toBe('allowed');
    expect(verdict(plain, facts([transfer(OTHER, 1n)]))).toBe('policy_denied:-');
  });

  it('function and decoded arguments, by name and by position', () => {
    const byName = [policy({ rules: [accept('small', { function: { signature: 'transfer(address to, uint256 amount)', args: [{ field: 'amount', lte: '1000' }, { field: 'to', in: [OTHER.toUpperCase().replace('0X', '0x')] }] } })] })];
    expect(verdict(byName, facts([transfer(OTHER, 1000n)]))).toBe('allowed');
    expect(verdict(byName, facts([transfer(OTHER, 1001n)]))).toBe('policy_denied:-');
    expect(verdict(byName, facts([transfer(ROUTER, 1n)]))).toBe('policy_denied:-');
    const byPosition = [policy({ rules: [reject('big', { function: { signature: 'function transfer(address,uint256)', args: [{ field: '1', gt: '10' }] } }), accept('all')] })];
    expect(verdict(byPosition, facts([transfer(OTHER, 11n)]))).toBe('policy_denied:big');
    expect(verdict(byPosition, facts([transfer(OTHER, 10n)]))).toBe('allowed');
  });

  it('native value bounds', () => {
    const p = [policy({ rules: [accept('dust', { value: { lte: '1000' } })] })];
    expect(verdict(p, facts([send(OTHER, 1000n)]))).toBe('allowed');
    expect(verdict(p, facts([send(OTHER, 1001n)]))).toBe('policy_denied:-');
  });

  it('approvals: approve(other, max) is refused unless the spender is allow-listed; revoking is no approval', () => {
    const p = [policy({ rules: [reject('foreign-approvals', { approval: { spendersNot: [ROUTER] } }), accept('token', { targets: [TOKEN] })] })];
    expect(verdict(p, facts([approve(OTHER, maxUint256)]))).toBe('policy_denied:foreign-approvals');
    expect(verdict(p, facts([approve(ROUTER, maxUint256)]))).toBe('allowed');
    expect(verdict(p, facts([approve(OTHER, 0n)]))).toBe('allowed');
    const increase: Call = { target: TOKEN, value: '0', data: encodeFunctionData({ abi, functionName: 'increaseAllowance', args: [OTHER, 1n] }) };
    const operator: Call = { target: TOKEN, value: '0', data: encodeFunctionData({ abi, functionName: 'setApprovalForAll', args: [OTHER, true] }) };
    const unsetOperator: Call = { target: TOKEN, value: '0', data: encodeFunctionData({ abi, functionName: 'setApprovalForAll', args: [OTHER, false] }) };
    const permit2: Call = { target: addr('44'), value: '0', data: encodeFunctionData({ abi: [abi[4]], functionName: 'approve', args: [TOKEN, OTHER, 5n, 0] }) };
    expect(verdict(p, facts([increase]))).toBe('policy_denied:foreign-approvals');
    expect(verdict(p, facts([operator]))).toBe('policy_denied:foreign-approvals');
    expect(verdict(p, facts([unsetOperator]))).toBe('allowed');
    // Permit2's allowance is judged by its spender argument, wherever Permit2 is.
    expect(verdict([policy({ rules: [reject('foreign-approvals', { approval: { spendersNot: [ROUTER] } }), accept('all')] })], facts([permit2]))).toBe('policy_denied:foreign-approvals');
  });

  it('protocol actions, a whole family, and conditions on the normalized input', () => {
    const p = [policy({ rules: [accept('swaps', { protocol: { actions: ['pool-a-v3/*'], input: [{ field: 'slippage_bps', lte: '100' }] } }), accept('supply', { protocol: { actions: ['lend-a-v3/supply'] } })] })];
    const swap = (slippage: unknown) => facts([transfer(OTHER, 1n), send(OTHER, 0n)], { action: { name: 'pool-a-v3/swap', input: { slippage_bps: slippage } } });
    expect(verdict(p, swap(100))).toBe('allowed');
    expect(verdict(p, swap('50.5'))).toBe('allowed');
    expect(verdict(p, swap(101))).toBe('policy_denied:-');
    expect(verdict(p, swap(undefined))).toBe('policy_denied:-');
    expect(verdict(p, facts([send(OTHER, 0n)], { action: { name: 'lend-a-v3/supply', input: {} } }))).toBe('allowed');
    expect(verdict(p, facts([send(OTHER, 0n)], { action: { name: 'lend-a-v3/borrow', input: {} } }))).toBe('policy_denied:-');
    // POST /execute's requests have no action: a protocol rule never accepts them.
    expect(verdict(p, facts([send(OTHER, 0n)]))).toBe('policy_denied:-');
  });

  it('a matching reject wins over an accept, whatever their order', () => {
    for (const rules of [[accept('all'), reject('no-other', { targets: [OTHER] })], [reject('no-other', { targets: [OTHER] }), accept('all')]]) {
      expect(verdict([policy({ rules })], facts([send(ROUTER, 1n), send(OTHER, 1n)]))).toBe('policy_denied:no-other');
    }
  });

  it('every call must be accepted: the refusal names the first call none accepts', () => {
    const d = evaluatePolicies([policy({ rules: [accept('router', { targets: [ROUTER] })] })], facts([send(ROUTER, 1n), send(OTHER, 1n)]));
    expect(d).toMatchObject({ allowed: false, callIndex: 1 });
    expect(!d.allowed && d.message).toContain('call 1');
  });

  it('the key-level policy bounds every agent policy, and an agent policy narrows the key', () => {
    const key = policy({ rules: [accept('base', { chains: ['base'] })] }, 'key');
    const agent = policy({ agents: { match: 'exact', agentId: 'bot-1' }, rules: [accept('anything')] }, 'agent');
    expect(verdict([key, agent], facts([send(OTHER, 1n)], { chain: 'arbitrum' }))).toBe('policy_denied:-');
    expect(evaluatePolicies([agent, key], facts([send(OTHER, 1n)], { chain: 'arbitrum' }))).toMatchObject({ policy: 'key' });
    const narrow = policy({ agents: { match: 'prefix', agentId: 'bot-' }, rules: [accept('dust', { value: { lte: '10' } })] }, 'bots');
    expect(verdict([key, narrow], facts([send(OTHER, 11n)]))).toBe('policy_denied:-');
    expect(verdict([key, narrow], facts([send(OTHER, 10n)]))).toBe('allowed');
    // Another agent of the key: only the key-level policy applies.
    expect(evaluatePolicies([key, narrow], facts([send(OTHER, 11n)], { agentId: 'other' }))).toMatchObject({ allowed: true, policies: ['key'] });
    // Another key's policy never applies.
    expect(evaluatePolicies([key], facts([send(OTHER, 1n)], { apiClient: 'key2', chain: 'arbitrum' }))).toMatchObject({ allowed: true, policies: [] });
  });

  it('the kill switch refuses first, with agent_suspended', () => {
    const p = [policy({ rules: [accept('all')] }, 'key'), policy({ agents: { match: 'exact', agentId: 'bot-1' }, suspended: true, rules: [accept('all')] }, 'bot1')];
    expect(evaluatePolicies(p, facts([send(OTHER, 1n)]))).toMatchObject({ allowed: false, code: 'agent_suspended', policy: 'bot1' });
    expect(verdict(p, facts([send(OTHER, 1n)], { agentId: 'bot-2' }))).toBe('allowed');
  });

  it('a validity window: nothing accepted before it starts or once it ended', () => {
    const p = [policy({ validFrom: '2026-11-26T00:00:00Z', validUntil: '2026-11-27T00:00:00Z', rules: [accept('all')] })];
    expect(verdict(p, facts([send(OTHER, 1n)]))).toBe('allowed');
    expect(verdict(p, facts([send(OTHER, 1n)], { now: new Date('2026-11-25T23:59:59Z') }))).toBe('policy_denied:-');
    expect(verdict(p, facts([send(OTHER, 1n)], { now: new Date('2026-11-27T00:00:00Z') }))).toBe('policy_denied:-');
  });

  it('a rule that cannot be applied fails the whole policy closed', () => {
    const bad = [policy({ rules: [accept('all'), reject('typo', { function: { signature: 'transfer(address to, uint256 amount)', args: [{ field: 'amout', gt: '0' }] } })] })];
    const d = evaluatePolicies(bad, facts([send(OTHER, 1n)]));
    expect(d).toMatchObject({ allowed: false, code: 'policy_denied', rule: 'typo' });
    expect(!d.allowed && d.message).toContain('amout');
    expect(verdict([policy({ rules: [accept('x', { function: { signature: 'not a signature(' } })] })], facts([send(OTHER, 1n)]))).toBe('policy_denied:x');
  });

  it('names what accepted each call when allowed', () => {
    const d = evaluatePolicies([policy({ rules: [accept('router', { targets: [ROUTER] }), accept('rest')] }, 'k')], facts([send(ROUTER, 1n), send(OTHER, 1n)]));
    expect(d).toEqual({ allowed: true, policies: ['k'], accepted: [{ policy: 'k', callIndex: 0, rule: 'router' }, { policy: 'k', callIndex: 1, rule: 'rest' }] });
  });
});

describe('refusedBeforePlanning', () => {
  const supply = (amount: string) => ({ apiClient: 'key1', agentId: 'bot-1', chain: 'base' as const, action: { name: 'lend-a-v3/supply', input: { amount } }, now: new Date('2026-11-26T12:00:00Z') });
  it('refuses what no call could change: no accept rule on the request, a reject on the request alone, the kill switch', () => {
    const p = [policy({ rules: [accept('small', { protocol: { actions: ['lend-a-v3/supply'], input: [{ field: 'amount', lte: '1' }] }, targets: [TOKEN] })] })];
    expect(refusedBeforePlanning(p, supply('2'))).toMatchObject({ allowed: false, code: 'policy_denied', rule: null });
    // The accept rule's call conditions are judged on the planned calls, later: allowed for now.
    expect(refusedBeforePlanning(p, supply('1'))).toMatchObject({ allowed: true });
    const rejecting = [policy({ rules: [accept('all'), reject('no-lending', { protocol: { actions: ['lend-a-v3/*'] } })] })];
    expect(refusedBeforePlanning(rejecting, supply('1'))).toMatchObject({ allowed: false, rule: 'no-lending' });
    // A reject that also looks at calls cannot be decided yet.
    const later = [policy({ rules: [accept('all'), reject('token', { protocol: { actions: ['lend-a-v3/*'] }, targets: [TOKEN] })] })];
    expect(refusedBeforePlanning(later, supply('1'))).toMatchObject({ allowed: true });
    expect(refusedBeforePlanning([policy({ suspended: true, rules: [accept('all')] })], supply('1'))).toMatchObject({ allowed: false, code: 'agent_suspended' });
  });
});

describe('what a review of the evaluator found', () => {
  it('a reject rule rejects what it cannot judge; an accept rule does not accept it', () => {
    const supply = (input: Record<string, unknown>) =>
      verdict([policy({ rules: [accept('all'), { name: 'big', action: 'reject', protocol: { actions: ['lend-a-v3/*'], input: [{ field: 'amount', gt: '1000' }] } }] })], facts([send(OTHER, 0n)], { action: { name: 'lend-a-v3/supply', input } }));
    expect(supply({ amount: '10' })).toBe('allowed');
    expect(supply({ amount: '5000' })).toBe('policy_denied:big');
    // The bound cannot be judged on another field, or on a value that is not a number: rejected, not let through.
    expect(supply({ amount_raw: '5000000000' })).toBe('policy_denied:big');
    expect(supply({ amount: 'max' })).toBe('policy_denied:big');
    // A call with the selector but arguments that do not decode (one byte short) is judged as doubt.
    const short = { ...transfer(OTHER, 10n ** 30n) };
    short.data = short.data.slice(0, -2);
    expect(verdict([policy({ rules: [accept('token', { targets: [TOKEN] }), { name: 'big', action: 'reject', function: { signature: 'transfer(address to, uint256 amount)', args: [{ field: 'amount', gt: '1' }] } }] })], facts([short]))).toBe('policy_denied:big');
    const shortApprove = { ...approve(OTHER, maxUint256) };
    shortApprove.data = shortApprove.data.slice(0, -2);
    expect(verdict([policy({ rules: [accept('token', { targets: [TOKEN] }), reject('approvals', { approval: {} })] })], facts([shortApprove]))).toBe('policy_denied:approvals');
  });

  it('bounds that are not decimals make the rule unusable: its policy refuses everything', () => {
    for (const bound of ['1e18', '01000', '+1000', '1_000']) {
      const p = [policy({ rules: [accept('all'), { name: 'big', action: 'reject', function: { signature: 'transfer(address to, uint256 amount)', args: [{ field: 'amount', gt: bound }] } }] })];
      expect([bound, verdict(p, facts([transfer(OTHER, 10n ** 24n)]))]).toEqual([bound, 'policy_denied:big']);
    }
  });

  it('a call to the agent’s own wallet is accepted only by a rule naming it in targets', () => {
    const wallet = addr('99');
    const upgrade: Call = { target: wallet, value: '0', data: '0x4f1ef286' };
    expect(verdict([policy({ rules: [accept('small-values', { value: { lte: '10' } })] })], facts([upgrade], { wallet }))).toBe('policy_denied:-');
    expect(verdict([policy({ rules: [accept('own', { targets: [wallet.toUpperCase().replace('0X', '0x')] })] })], facts([upgrade], { wallet }))).toBe('allowed');
  });

  it('`0x` is a call without data only: 1 to 3 bytes reach the fallback and match no selector', () => {
    const p = [policy({ rules: [accept('plain', { selectors: ['0x'] })] })];
    expect(verdict(p, facts([{ target: OTHER, value: '1', data: '0x' }]))).toBe('allowed');
    expect(verdict(p, facts([{ target: OTHER, value: '1', data: '0xabcdef' }]))).toBe('policy_denied:-');
  });

  it('text compares without regard to case (token symbols, addresses); increaseApproval is an approval', () => {
    const p = [policy({ rules: [accept('weth', { protocol: { actions: ['lend-a-v3/supply'], input: [{ field: 'token', in: ['WETH'] }] } })] })];
    expect(verdict(p, facts([send(OTHER, 0n)], { action: { name: 'lend-a-v3/supply', input: { token: 'weth' } } }))).toBe('allowed');
    const old: Call = { target: TOKEN, value: '0', data: encodeFunctionData({ abi: parseAbi(['function increaseApproval(address spender, uint256 addedValue)']), functionName: 'increaseApproval', args: [OTHER, 1n] }) };
    expect(verdict([policy({ rules: [accept('all'), reject('approvals', { approval: {} })] })], facts([old]))).toBe('policy_denied:approvals');
  });
});
