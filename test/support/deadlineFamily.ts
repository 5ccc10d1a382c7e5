import { concat, numberToHex, type Address, type Hex } from 'viem';
import { z } from 'zod';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { callOf } from '../../src/protocols/common/calls.ts';
import { actionFields } from '../../src/protocols/common/inputs.ts';
import type { AnyFamily } from '../../src/protocols/index.ts';

/**
 * A protocol family for tests whose plan reads changing state, as a swap's minimum out or a perp order's price
 * will: `bump` increments the devnet's Counter by `by`, with a deadline taken from the chain's clock (relative
 * `deadline_seconds` made absolute, as a family must; an absolute `deadline` given or stored is kept) and the
 * block time it was planned at, both carried in the calldata (the Counter ignores trailing bytes). Each plan a
 * second later derives other calls; the request must keep the first plan's bound. `bump` plans again at signing.
 */
export const DEADLINE_FAMILY_KEY = 'testDeadline';

const Seconds = z.string().regex(/^[1-9][0-9]{0,9}$/);

const bump = {
  kind: 'action' as const,
  path: 'bump',
  summary: 'Increment the Counter by `by`, before a deadline',
  description: 'Test only: a plan that reads the chain clock.',
  input: z.object({
    ...actionFields(['base', 'ethereum']),
    by: z.string().regex(/^[1-9][0-9]{0,5}$/),
    deadline_seconds: Seconds.default('300'),
    deadline: Seconds.optional(),
  }),
  replan: true,
  async plan(ctx: { config: { counter: Address }; now(): Promise<bigint> }, input: { by: string; deadline_seconds: string; deadline?: string }) {
    const now = await ctx.now();
    const deadline = input.deadline !== undefined ? BigInt(input.deadline) : now + BigInt(input.deadline_seconds);
    const call = callOf({ address: ctx.config.counter, abi: counterAbi, functionName: 'incrementBy', args: [BigInt(input.by)] });
    return {
      calls: [{ ...call, data: concat([call.data as Hex, numberToHex(deadline, { size: 32 }), numberToHex(now, { size: 32 })]) }],
      tokens: [],
      bounds: { deadline: deadline.toString() },
    };
  },
};

export const deadlineFamily: AnyFamily = {
  slug: 'test-deadline',
  aliases: [],
  protocol: 'Deadline counter (test)',
  key: DEADLINE_FAMILY_KEY,
  config: z.object({ counter: z.string().regex(/^0x[0-9a-fA-F]{40}$/) }),
  chains: ['base', 'ethereum'],
  description: 'Test only: an action whose plan reads the chain clock.',
  position: z.object({}),
  endpoints: [bump as never],
  decodeRevert: () => undefined,
};

/** The deadline and the planning time a `bump` call carries. */
export function bumpWords(data: string): { deadline: bigint; plannedAt: bigint } {
  const tail = data.slice(-128);
  return { deadline: BigInt(`0x${tail.slice(0, 64)}`), plannedAt: BigInt(`0x${tail.slice(64)}`) };
}
