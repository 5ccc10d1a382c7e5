import { encodeFunctionData, getAddress, maxUint256, parseAbi, type Address } from 'viem';
import { describe, expect, it } from 'vitest';
import { API_VERSION, PolicyRuleSchema, type AgentPolicy, type Call, type PolicyRule } from '../api/v1alpha1/index.ts';
import type { Outflow } from '../chain/types.ts';
import { evaluatePolicies, refusedBeforePlanning } from './evaluate.ts';
import type { PolicyFacts } from './facts.ts';
import { policiesNeedOutflows } from './needs.ts';
import { configuredPrice, type AssetPrice } from './prices/price.ts';
import { valueOf } from './valuation.ts';

const addr = (b: string) => getAddress(`0x${b.repeat(20)}`);
const USDC = addr('11');
const ODD = addr('33');
const SPENDER = addr('44');
const TREASURY = addr('55');
const STRANGER = addr('66');
const abi = parseAbi(['function transfer(address to, uint256 amount)', 'function approve(address spender, uint256 amount)']);
const transfer = (to: Address, amount: bigint, token = USDC): Call => ({ target: token, value: '0', data: encodeFunctionData({ abi, functionName: 'transfer', args: [to, amount] }) });
const approve = (spender: Address, amount: bigint): Call => ({ target: USDC, value: '0', data: encodeFunctionData({ abi, functionName: 'approve', args: [spender, amount] }) });
const prices = new Map<string, AssetPrice>([[USDC.toLowerCase(), configuredPrice('1', 6)]]);
const out = (to: Address, amount: bigint, token = USDC): Outflow => ({ kind: 'erc20', token, to, amount, callIndex: 0 });

let n = 0;
const policy = (rules: PolicyRule[]): AgentPolicy => ({
  apiVersion: API_VERSION,
  kind: 'AgentPolicy',
  metadata: { name: `p${++n}`, namespace: 'default' },
  spec: { apiClient: 'key1', suspended: false, rules: rules.map((r) => PolicyRuleSchema.parse(r)) },
});
/** The facts of `calls` whose simulation moved `outflows` (undefined: not traceable), valued at `prices`. */
const facts = (calls: Call[], outflows: Outflow[] | undefined): PolicyFacts => ({
  apiClient: 'key1',
  agentId: 'bot-1',
  chain: 'base',
  calls,
  now: new Date('2026-11-26T12:00:00Z'),
  execution: valueOf({ outflows, unavailable: outflows ? undefined : 'eth_simulateV1 is not supported' }, calls, prices),
});
const anything: PolicyRule = { name: 'anything', action: 'accept' };

describe('usd rules', () => {
  const capped = policy([anything, { name: 'max-100-usd', action: 'reject', usd: { gt: '100' } }]);
  const under = policy([{ name: 'up-to-100-usd', action: 'accept', usd: { lte: '100' } }]);

  it('a reject over the limit refuses, naming the rule and the figures; under it passes', () => {
    const d = evaluatePolicies([capped], facts([transfer(STRANGER, 150_000_000n)], [out(STRANGER, 150_000_000n)]));
    expect(d).toMatchObject({ allowed: false, code: 'policy_denied', rule: 'max-100-usd' });
    expect(!d.allowed && d.message).toContain('this execution 150 USD; the rule: gt 100 USD');
    expect(evaluatePolicies([capped], facts([transfer(STRANGER, 99_500_000n)], [out(STRANGER, 99_500_000n)])).allowed).toBe(true);
  });

  it('an accept within the limit accepts; over it nothing accepts, and the message says by how much', () => {
    expect(evaluatePolicies([under], facts([transfer(STRANGER, 100_000_000n)], [out(STRANGER, 100_000_000n)]))).toMatchObject({ allowed: true, accepted: [{ rule: 'up-to-100-usd' }] });
    const d = evaluatePolicies([under], facts([transfer(STRANGER, 100_000_001n)], [out(STRANGER, 100_000_001n)]));
    expect(d).toMatchObject({ allowed: false, rule: null });
    expect(!d.allowed && d.message).toContain('up-to-100-usd: this execution 100.000001 USD; the rule: lte 100 USD');
  });

  it('an unpriced token fails closed under either, naming the token', () => {
    const f = facts([transfer(STRANGER, 1n, ODD)], [out(STRANGER, 1n, ODD)]);
    const rejected = evaluatePolicies([capped], f);
    expect(rejected).toMatchObject({ allowed: false, rule: 'max-100-usd' });
    expect(!rejected.allowed && rejected.message).toContain(`token ${ODD} is unpriced`);
    const notAccepted = evaluatePolicies([under], f);
    expect(notAccepted).toMatchObject({ allowed: false, rule: null });
    expect(!notAccepted.allowed && notAccepted.message).toContain(`token ${ODD} is unpriced`);
  });

  it('outflows the chain cannot trace fail closed', () => {
    const f = facts([transfer(STRANGER, 1n)], undefined);
    expect(evaluatePolicies([capped], f)).toMatchObject({ allowed: false, rule: 'max-100-usd' });
    expect(evaluatePolicies([under], f)).toMatchObject({ allowed: false, rule: null });
  });

  it('approve(other, max) is refused under a USD rule; the same to an allow-listed spender passes', () => {
    const max = [approve(STRANGER, maxUint256)];
    const d = evaluatePolicies([under], facts(max, []));
    expect(d).toMatchObject({ allowed: false });
    expect(!d.allowed && d.message).toContain('grants an unbounded allowance');
    expect(evaluatePolicies([capped], facts(max, []))).toMatchObject({ allowed: false, rule: 'max-100-usd' });
    const listed = policy([{ name: 'router-ok', action: 'accept', usd: { lte: '100', approvalSpenders: [SPENDER] } }]);
    expect(evaluatePolicies([listed], facts([approve(SPENDER, maxUint256)], []))).toMatchObject({ allowed: true });
    // A bounded approval counts at its amount.
    expect(evaluatePolicies([under], facts([approve(STRANGER, 60_000_000n)], [])).allowed).toBe(true);
    expect(evaluatePolicies([under], facts([approve(STRANGER, 60_000_000n), transfer(STRANGER, 50_000_000n)], [out(STRANGER, 50_000_000n)])).allowed).toBe(false);
  });
});

describe('outflow rules', () => {
  it('"nothing leaves to anyone but the treasury": a reject on other recipients', () => {
    const p = policy([anything, { name: 'only-treasury', action: 'reject', outflow: { recipientsNot: [TREASURY] } }]);
    expect(evaluatePolicies([p], facts([transfer(TREASURY, 5n)], [out(TREASURY, 5n)])).allowed).toBe(true);
    expect(evaluatePolicies([p], facts([transfer(STRANGER, 5n)], [out(STRANGER, 5n)]))).toMatchObject({ allowed: false, rule: 'only-treasury' });
    // Nothing leaves at all: nothing to reject.
    expect(evaluatePolicies([p], facts([{ target: STRANGER, value: '0', data: '0x' }], [])).allowed).toBe(true);
    // Unknown outflows: doubt rejects.
    expect(evaluatePolicies([p], facts([transfer(TREASURY, 5n)], undefined))).toMatchObject({ allowed: false, rule: 'only-treasury' });
  });

  it('"no more than N of token T" sums the transfers of one execution', () => {
    const p = policy([anything, { name: 'usdc-cap', action: 'reject', outflow: { tokens: [USDC], amount: { gt: '100' } } }]);
    const two = (a: bigint, b: bigint) => [transfer(STRANGER, a), transfer(TREASURY, b)];
    expect(evaluatePolicies([p], facts(two(60n, 40n), [out(STRANGER, 60n), out(TREASURY, 40n)])).allowed).toBe(true);
    expect(evaluatePolicies([p], facts(two(60n, 41n), [out(STRANGER, 60n), out(TREASURY, 41n)]))).toMatchObject({ allowed: false, rule: 'usdc-cap' });
    // Another token's outflows are not counted.
    expect(evaluatePolicies([p], facts([transfer(STRANGER, 1000n, ODD)], [out(STRANGER, 1000n, ODD)])).allowed).toBe(true);
  });

  it('an accept on outflows: only transfers to the treasury, by native token too', () => {
    const p = policy([{ name: 'pay-treasury', action: 'accept', outflow: { tokens: ['native'], recipients: [TREASURY] } }]);
    const native = (to: Address): Outflow => ({ kind: 'native', to, amount: 7n });
    expect(evaluatePolicies([p], facts([{ target: TREASURY, value: '7', data: '0x' }], [native(TREASURY)])).allowed).toBe(true);
    expect(evaluatePolicies([p], facts([{ target: STRANGER, value: '7', data: '0x' }], [native(STRANGER)])).allowed).toBe(false);
  });
});

describe('where outflows are not known (the gateway’s early check)', () => {
  it('rules on outflows and USD refuse nothing: a reject does not match, an accept may', () => {
    const capped = policy([anything, { name: 'max-100-usd', action: 'reject', usd: { gt: '100' } }, { name: 'only-treasury', action: 'reject', outflow: { recipientsNot: [TREASURY] } }]);
    const under = policy([{ name: 'up-to-100-usd', action: 'accept', usd: { lte: '100' } }]);
    const early = { ...facts([transfer(STRANGER, 10n ** 12n)], []), execution: undefined };
    expect(evaluatePolicies([capped, under], early).allowed).toBe(true);
    expect(refusedBeforePlanning([capped, under], { ...early, action: { name: 'lend-a-v3/supply', input: {} } }).allowed).toBe(true);
  });

  it('policiesNeedOutflows: only a policy with an outflow or USD rule asks the simulation to trace them', () => {
    expect(policiesNeedOutflows([policy([anything])])).toBe(false);
    expect(policiesNeedOutflows([policy([anything]), policy([{ name: 'u', action: 'reject', usd: { gt: '1' } }])])).toBe(true);
    expect(policiesNeedOutflows([policy([{ name: 'o', action: 'reject', outflow: { tokens: ['native'] } }])])).toBe(true);
  });
});

