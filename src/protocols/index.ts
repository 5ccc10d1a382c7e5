import type { ChainName } from '../config/chains.ts';
import { aaveV3Family } from './aaveV3/index.ts';
import { compoundV3Family } from './compoundV3/index.ts';
import { morphoBlueFamily } from './morphoBlue/index.ts';
import type { AnyFamily } from './types.ts';

/** The six slugs of spec 4.3, with the protocol each stands for, its own name (an alias) and its chain. */
export const SPEC_PROTOCOLS: readonly { slug: string; protocol: string; alias: string; chain: ChainName }[] = [
  { slug: 'lend-a-v3', protocol: 'Aave v3', alias: 'aave-v3', chain: 'ethereum' },
  { slug: 'lend-b-v3', protocol: 'Compound v3', alias: 'compound-v3', chain: 'base' },
  { slug: 'lend-c', protocol: 'Morpho Blue', alias: 'morpho-blue', chain: 'base' },
  { slug: 'pool-a-v3', protocol: 'Uniswap v3', alias: 'uniswap-v3', chain: 'ethereum' },
  { slug: 'pool-b-v4', protocol: 'Uniswap v4', alias: 'uniswap-v4', chain: 'ethereum' },
  { slug: 'perp-v2', protocol: 'GMX v2', alias: 'gmx-v2', chain: 'arbitrum' },
];

/**
 * The families this service serves: routes, OpenAPI, CLI commands and MCP tools are generated from these
 * declarations. A spec slug without a family here answers 404 protocol_not_served (after the API key).
 */
export const FAMILIES: readonly AnyFamily[] = [aaveV3Family, compoundV3Family, morphoBlueFamily];

/** The family a slug or an alias names. */
export const familyOf = (slugOrAlias: string): AnyFamily | undefined =>
  FAMILIES.find((f) => f.slug === slugOrAlias || f.aliases.includes(slugOrAlias));

export type { AnyFamily, ProtocolFamily } from './types.ts';
