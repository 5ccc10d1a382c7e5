import { isAddressEqual, parseAbi } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { verifyingPaymasterAbi } from '../../chain/abi.ts';
import { balanceLevel, eth, GAS, WARN_MULTIPLE } from '../thresholds.ts';
import { result, type CheckResult, type DoctorCheck } from '../types.ts';
import { hasCode } from './contracts.ts';

const basePaymasterAbi = parseAbi(['function entryPoint() view returns (address)']);

/**
 * The VerifyingPaymaster the service signs for: there, for this EntryPoint, signed for by the configured key, with
 * a deposit in the EntryPoint that pays for operations, and (for an outside bundler) a stake.
 */
export const paymasterCheck: DoctorCheck = {
  id: 'paymaster',
  summary: "the paymaster's code, EntryPoint and verifyingSigner; its deposit and stake in the EntryPoint",
  async run(ctx): Promise<CheckResult[]> {
    const { paymaster, entryPoint, name } = ctx.target.config;
    if (!(await hasCode(ctx, paymaster))) {
      return [result(ctx, 'paymaster.code', 'fail', `no code at the paymaster ${paymaster}`, `deploy a VerifyingPaymaster for ${entryPoint} whose verifyingSigner is your paymaster signer key's address (\`agent-wallet paymaster deploy --chain ${name} --rpc-url …\`), and configure its address (docs/operations.md, "Paymaster operations and rotation")`)];
    }
    const out: CheckResult[] = [];
    const read = <T>(p: Promise<T>) => p.then((v) => ({ ok: true as const, v }), () => ({ ok: false as const }));
    const [pmEntryPoint, signer] = await Promise.all([
      read(ctx.client.readContract({ address: paymaster, abi: basePaymasterAbi, functionName: 'entryPoint' })),
      read(ctx.client.readContract({ address: paymaster, abi: verifyingPaymasterAbi, functionName: 'verifyingSigner' })),
    ]);
    if (!pmEntryPoint.ok || !signer.ok) {
      out.push(result(ctx, 'paymaster.code', 'fail', `${paymaster} does not answer entryPoint() and verifyingSigner(): not a VerifyingPaymaster`, 'configure the address of your VerifyingPaymaster (eth-infinitism v0.7 sample)'));
      return out;
    }
    out.push(
      isAddressEqual(pmEntryPoint.v, entryPoint)
        ? result(ctx, 'paymaster.entryPoint', 'ok', `the paymaster serves EntryPoint ${entryPoint}`)
        : result(ctx, 'paymaster.entryPoint', 'fail', `the paymaster serves EntryPoint ${pmEntryPoint.v}, not the configured ${entryPoint}`, 'deploy a paymaster for the configured EntryPoint, or correct entryPoint'),
    );
    const expected = ctx.target.accounts.paymasterSigner;
    out.push(
      ctx.target.config.sponsor?.kind === 'erc7677'
        ? result(ctx, 'paymaster.signer', 'ok', `verifyingSigner is ${signer.v}: an ERC-7677 paymaster service holds its key and signs the sponsorships`)
        : expected === undefined
        ? result(ctx, 'paymaster.signer', 'warn', `verifyingSigner is ${signer.v}; no paymaster signer key was given to compare`, 'set AGENT_WALLET_PAYMASTER_SIGNER_KEY (the key the service signs sponsorships with) to check it')
        : isAddressEqual(signer.v, expected)
          ? result(ctx, 'paymaster.signer', 'ok', `verifyingSigner ${signer.v} is the configured signer key's address`)
          : result(ctx, 'paymaster.signer', 'fail', `verifyingSigner is ${signer.v}; the configured signer key is ${expected}'s: every sponsored operation would fail validation (AA34)`, "the VerifyingPaymaster's signer is immutable: configure the key of its verifyingSigner, or rotate to a paymaster for your key (`agent-wallet paymaster rotate start`)"),
    );
    const info = await ctx.client.readContract({ address: entryPoint, abi: entryPoint07Abi, functionName: 'getDepositInfo', args: [paymaster] });
    const maxFee = await ctx.maxFeePerGas();
    const { level, units } = balanceLevel(info.deposit, GAS.operation, maxFee);
    const depositFix = `deposit for the paymaster in the EntryPoint: \`agent-wallet paymaster fund --chain ${name} --paymaster ${paymaster} --amount ETH\` (keep at least ${WARN_MULTIPLE} operations' worth; docs/operations.md, "Refilling")`;
    out.push(result(ctx, 'paymaster.deposit', level, `deposit ${eth(info.deposit)} in the EntryPoint: about ${units} sponsored operations at ${maxFee} wei/gas`, depositFix));
    // The built-in bundler does not enforce ERC-7562's reputation rules; an outside one throttles an unstaked paymaster.
    const external = ctx.target.bundlerUrl !== undefined;
    if (info.staked) {
      out.push(result(ctx, 'paymaster.stake', 'ok', `staked ${eth(info.stake)}, unstake delay ${info.unstakeDelaySec} s`));
    } else {
      out.push(
        result(
          ctx,
          'paymaster.stake',
          external ? 'warn' : 'ok',
          `not staked${info.withdrawTime > 0 ? ` (unlocked; withdrawable at ${new Date(info.withdrawTime * 1000).toISOString()})` : ''}${external ? '' : ': the built-in bundler does not need it'}`,
          `stake it: \`agent-wallet paymaster stake --chain ${name} --paymaster ${paymaster} --amount ETH\` (bundlers commonly ask a 1-day unstake delay and a chain-specific minimum on ${name}); unstaked, an outside bundler throttles it under ERC-7562`,
        ),
      );
    }
    return out;
  },
};
