import { encodeFunctionData, getAddress, maxUint256, parseAbi, type Address } from 'viem';
import { describe, expect, it } from 'vitest';
import type { Call } from '../api/v1alpha1/index.ts';
import type { Outflow } from '../chain/types.ts';
import { configuredPrice, type AssetPrice } from './prices/price.ts';
import { formatMicroUsd, totalOf, valueOf } from './valuation.ts';

const addr = (b: string) => getAddress(`0x${b.repeat(20)}`);
const USDC = addr('11');
const WETH = addr('22');
const ODD = addr('33');
const SPENDER = addr('44');
const SINK = addr('55');
const abi = parseAbi(['function approve(address spender, uint256 amount)', 'function setApprovalForAll(address operator, bool approved)']);
const approve = (token: Address, spender: Address, amount: bigint): Call => ({ target: token, value: '0', data: encodeFunctionData({ abi, functionName: 'approve', args: [spender, amount] }) });
const prices = new Map<string, AssetPrice>([
  [USDC.toLowerCase(), configuredPrice('1', 6)],
  [WETH.toLowerCase(), configuredPrice('3000', 18)],
  ['native', configuredPrice('3000', 18)],
]);
const out = (token: Address | 'native', amount: bigint, to: Address = SINK): Outflow =>
  token === 'native' ? { kind: 'native', to, amount } : { kind: 'erc20', token, to, amount };

describe('valuing an execution', () => {
  it('sums its outflows in micro-dollars, line by line', () => {
    const v = valueOf({ outflows: [out(USDC, 150_000_000n), out('native', 10n ** 15n), out(WETH, 10n ** 16n)] }, [], prices);
    const total = totalOf(v);
    expect(total).toMatchObject({ kind: 'priced', microUsd: 150_000_000n + 3_000_000n + 30_000_000n, unbounded: false });
    expect(v.lines.map((l) => l.value)).toEqual([
      { kind: 'priced', microUsd: 150_000_000n },
      { kind: 'priced', microUsd: 3_000_000n },
      { kind: 'priced', microUsd: 30_000_000n },
    ]);
    expect(formatMicroUsd(183_000_000n)).toBe('183');
    expect(formatMicroUsd(3_100_000n)).toBe('3.1');
  });

  it('an approval counts at its amount unless its spender is allow-listed; max is unbounded', () => {
    const v = valueOf({ outflows: [] }, [approve(USDC, SPENDER, 40_000_000n), approve(WETH, SINK, maxUint256)], prices);
    expect(totalOf(v)).toMatchObject({ kind: 'priced', microUsd: 40_000_000n, unbounded: true });
    expect(totalOf(v, [SINK])).toMatchObject({ kind: 'priced', microUsd: 40_000_000n, unbounded: false });
    expect(totalOf(v, [SINK, SPENDER.toLowerCase()])).toMatchObject({ kind: 'priced', microUsd: 0n, unbounded: false });
  });

  it('an unpriced token makes the whole unpriced, naming it; unless only an allow-listed approval holds it', () => {
    const v = valueOf({ outflows: [out(USDC, 1n)] }, [approve(ODD, SPENDER, 5n)], prices);
    expect(totalOf(v)).toMatchObject({ kind: 'unpriced', asset: ODD, reason: 'not priced' });
    expect(totalOf(v, [SPENDER])).toMatchObject({ kind: 'priced', microUsd: 1n });
    const sent = valueOf({ outflows: [out(ODD, 1n)] }, [], prices);
    expect(totalOf(sent, [SPENDER])).toMatchObject({ kind: 'unpriced', asset: ODD });
  });

  it('an approval whose arguments do not decode is unpriced, whatever the allow-list', () => {
    const short: Call = { target: USDC, value: '0', data: approve(USDC, SPENDER, 1n).data.slice(0, 40) as `0x${string}` };
    const v = valueOf({ outflows: [] }, [short], prices);
    expect(totalOf(v, [USDC, SPENDER])).toMatchObject({ kind: 'unpriced', asset: USDC, reason: 'an approval whose arguments do not decode' });
  });

  it('outflows the chain could not trace are unavailable', () => {
    const v = valueOf({ outflows: undefined, unavailable: 'eth_simulateV1 is not supported' }, [approve(USDC, SPENDER, 1n)], prices);
    expect(totalOf(v)).toEqual({ kind: 'unavailable', reason: 'eth_simulateV1 is not supported' });
  });

  it('an operator approval of a priced collection is unbounded, of any other unpriced', () => {
    const operator = (token: Address): Call => ({ target: token, value: '0', data: encodeFunctionData({ abi, functionName: 'setApprovalForAll', args: [SPENDER, true] }) });
    expect(totalOf(valueOf({ outflows: [] }, [operator(WETH)], prices))).toMatchObject({ kind: 'priced', unbounded: true });
    expect(totalOf(valueOf({ outflows: [] }, [operator(ODD)], prices))).toMatchObject({ kind: 'unpriced', asset: ODD });
  });
});
