import { z } from 'zod';
import type { ChainName } from '../config/chains.ts';
import type { AaveV3Config } from './aaveV3/config.ts';
import type { CompoundV3Config } from './compoundV3/config.ts';
import type { GmxV2Config } from './gmxV2/config.ts';
import type { MorphoBlueConfig } from './morphoBlue/config.ts';
import type { UniswapV3Config } from './uniswapV3/config.ts';
import type { UniswapV4Config } from './uniswapV4/config.ts';

/**
 * Where each DeFi protocol of the `/protocols/...` families lives on a chain: a chain's `protocols` section, one
 * entry per family under the family's key, each validated by the schema the family declares (its `config.ts`).
 * In the embedded mode the devnet writes them into its manifest (src/devnet/protocols); in a cluster they are part
 * of each chain's entry in the config file (the Helm chart ships the real testnets' addresses). A protocol a chain
 * does not configure is not served there.
 */
export interface ProtocolsConfig {
  aaveV3?: AaveV3Config;
  compoundV3?: CompoundV3Config;
  gmxV2?: GmxV2Config;
  morphoBlue?: MorphoBlueConfig;
  uniswapV3?: UniswapV3Config;
  uniswapV4?: UniswapV4Config;
}
export type ProtocolKey = keyof ProtocolsConfig;

/**
 * The schema of a chain's `protocols` for `families`: each family's own section, all optional; a key no family
 * declares is refused with the keys that are known (a typo, or a protocol this build does not serve yet).
 */
export function protocolsConfigSchema(families: readonly { key: string; config: z.ZodType }[]): z.ZodType<ProtocolsConfig> {
  return z.strictObject(Object.fromEntries(families.map((f) => [f.key, f.config.optional()]))) as unknown as z.ZodType<ProtocolsConfig>;
}

/** Each served chain's protocols, validated against `families`' schemas: what the endpoints are configured with. */
export function protocolsByChain(
  chains: readonly { name: ChainName; protocols?: object | undefined }[],
  families: readonly { key: string; config: z.ZodType }[],
): ReadonlyMap<ChainName, ProtocolsConfig> {
  const schema = protocolsConfigSchema(families);
  return new Map(
    chains.map((c) => {
      const parsed = schema.safeParse(c.protocols ?? {});
      if (!parsed.success) throw new ProtocolsConfigError(c.name, parsed.error, families.map((f) => f.key));
      return [c.name, parsed.data];
    }),
  );
}

export class ProtocolsConfigError extends Error {
  override readonly name = 'ProtocolsConfigError';
  constructor(chain: ChainName, error: z.ZodError, known: readonly string[]) {
    const issues = error.issues.map((i) => {
      const where = ['protocols', ...i.path].join('.');
      return i.code === 'unrecognized_keys' ? `${where}: ${i.message}; this build serves ${known.join(', ')}` : `${where}: ${i.message}`;
    });
    super(`chain ${chain}: ${issues.join('; ')}`);
  }
}
