import { parseAbi } from 'viem';
import { result, type CheckResult, type DoctorCheck } from '../types.ts';
import { hasCode } from './contracts.ts';

const decimalsAbi = parseAbi(['function decimals() view returns (uint8)']);

/** Each configured token is a contract with the configured decimals: a wrong one misprices every amount. */
export const tokensCheck: DoctorCheck = {
  id: 'tokens',
  summary: 'each configured token has code and the configured decimals',
  async run(ctx) {
    return Promise.all(
      ctx.target.config.tokens.map(async (t): Promise<CheckResult> => {
        const id = `token.${t.symbol}`;
        if (!(await hasCode(ctx, t.address))) return result(ctx, id, 'fail', `no code at ${t.symbol} ${t.address}`, `correct tokens[${t.symbol}].address for this chain, or remove the token`);
        const decimals = await ctx.client.readContract({ address: t.address, abi: decimalsAbi, functionName: 'decimals' }).catch(() => undefined);
        if (decimals === undefined) return result(ctx, id, 'fail', `${t.symbol} ${t.address} does not answer decimals(): not an ERC-20`, `correct tokens[${t.symbol}].address`);
        if (decimals !== t.decimals) return result(ctx, id, 'fail', `${t.symbol} ${t.address} has ${decimals} decimals; the configuration says ${t.decimals}`, `set tokens[${t.symbol}].decimals to ${decimals}`);
        return result(ctx, id, 'ok', `${t.symbol} ${t.address}, ${decimals} decimals`);
      }),
    );
  },
};
