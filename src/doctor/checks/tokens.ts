import { parseAbi } from 'viem';
import { result, type CheckContext, type CheckResult, type DoctorCheck } from '../types.ts';
import { hasCode } from './contracts.ts';

const decimalsAbi = parseAbi(['function decimals() view returns (uint8)']);
const domainAbi = parseAbi([
  'function name() view returns (string)',
  'function version() view returns (string)',
  'function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)',
]);

/**
 * The token's EIP-712 name and version as it signs: `name()`, and `version()` (Circle's FiatToken) or ERC-5267's
 * `eip712Domain()` (the devnet's TestStablecoin). Undefined when it answers neither.
 */
async function domainOf(ctx: CheckContext, address: `0x${string}`): Promise<{ name: string; version: string } | undefined> {
  const read = <F extends 'name' | 'version'>(functionName: F) => ctx.client.readContract({ address, abi: domainAbi, functionName }).catch(() => undefined);
  const [name, version] = await Promise.all([read('name'), read('version')]);
  if (name !== undefined && version !== undefined) return { name, version };
  const domain = await ctx.client.readContract({ address, abi: domainAbi, functionName: 'eip712Domain' }).catch(() => undefined);
  return domain === undefined ? undefined : { name: domain[1], version: domain[2] };
}

/** Each configured token is a contract with the configured decimals: a wrong one misprices every amount. */
export const tokensCheck: DoctorCheck = {
  id: 'tokens',
  summary: 'each configured token has code, the configured decimals and, for x402, the configured EIP-712 name and version',
  async run(ctx) {
    return Promise.all(
      ctx.target.config.tokens.map(async (t): Promise<CheckResult> => {
        const id = `token.${t.symbol}`;
        if (!(await hasCode(ctx, t.address))) return result(ctx, id, 'fail', `no code at ${t.symbol} ${t.address}`, `correct tokens[${t.symbol}].address for this chain, or remove the token`);
        const decimals = await ctx.client.readContract({ address: t.address, abi: decimalsAbi, functionName: 'decimals' }).catch(() => undefined);
        if (decimals === undefined) return result(ctx, id, 'fail', `${t.symbol} ${t.address} does not answer decimals(): not an ERC-20`, `correct tokens[${t.symbol}].address`);
        if (decimals !== t.decimals) return result(ctx, id, 'fail', `${t.symbol} ${t.address} has ${decimals} decimals; the configuration says ${t.decimals}`, `set tokens[${t.symbol}].decimals to ${decimals}`);
        if (t.eip3009) {
          // x402 offers this token with this domain: a wrong one makes every payer's authorization fail to verify.
          const domain = await domainOf(ctx, t.address);
          if (domain === undefined) return result(ctx, id, 'warn', `${t.symbol} ${t.address}: its EIP-712 domain could not be read (name(), version() or eip712Domain())`, `check tokens[${t.symbol}].eip3009 against the token's contract on an explorer`);
          if (domain.name !== t.eip3009.name || domain.version !== t.eip3009.version) {
            return result(ctx, id, 'fail', `${t.symbol} ${t.address} signs as { name: "${domain.name}", version: "${domain.version}" }; eip3009 says { name: "${t.eip3009.name}", version: "${t.eip3009.version}" }: every x402 payment would fail to verify`, `set tokens[${t.symbol}].eip3009 to { name: "${domain.name}", version: "${domain.version}" }`);
          }
          return result(ctx, id, 'ok', `${t.symbol} ${t.address}, ${decimals} decimals, EIP-712 "${domain.name}" version ${domain.version}`);
        }
        return result(ctx, id, 'ok', `${t.symbol} ${t.address}, ${decimals} decimals`);
      }),
    );
  },
};
