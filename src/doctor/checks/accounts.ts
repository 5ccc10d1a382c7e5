import type { Address } from 'viem';
import { balanceLevel, eth, GAS, WARN_MULTIPLE } from '../thresholds.ts';
import { result, type CheckContext, type CheckResult, type DoctorCheck } from '../types.ts';

async function balanceResult(ctx: CheckContext, id: string, role: string, address: Address, gasEach: bigint, unit: string): Promise<CheckResult> {
  const [balance, maxFee] = await Promise.all([ctx.client.getBalance({ address }), ctx.maxFeePerGas()]);
  const { level, units } = balanceLevel(balance, gasEach, maxFee);
  return result(
    ctx,
    id,
    level,
    `${role} ${address}: ${eth(balance)}, about ${units} ${unit} at ${maxFee} wei/gas`,
    `send native coin to ${address} on ${ctx.target.config.name} (at least ${WARN_MULTIPLE} ${unit}' worth; docs/operations.md, "Refilling")`,
  );
}

/**
 * The accounts the service sends from pay their own gas: the executors (bundles, built-in bundler only), the x402
 * settler and the faucet account (when configured).
 */
export const accountsCheck: DoctorCheck = {
  id: 'accounts',
  summary: 'the executors, the x402 settler and the faucet account hold native coin for their gas',
  async run(ctx) {
    const { executors, settler, faucet } = ctx.target.accounts;
    const out: Promise<CheckResult>[] = [];
    if (ctx.target.bundlerUrl !== undefined) {
      out.push(Promise.resolve(result(ctx, 'executor.balance', 'ok', 'an outside bundler sends the bundles: no executor accounts')));
    } else if (executors.length === 0) {
      out.push(Promise.resolve(result(ctx, 'executor.balance', 'warn', 'no executor keys were given: balances not checked', 'set AGENT_WALLET_EXECUTOR_KEYS (comma-separated) as the service gets them')));
    } else {
      executors.forEach((a, i) => out.push(balanceResult(ctx, `executor.balance`, `executor ${i}`, a, GAS.bundle, 'bundles')));
    }
    if (settler) out.push(balanceResult(ctx, 'settler.balance', 'x402 settler', settler, GAS.transaction, 'settlements'));
    if (faucet) out.push(balanceResult(ctx, 'faucet.balance', 'faucet account', faucet, GAS.transaction, 'drips'));
    return Promise.all(out);
  },
};
