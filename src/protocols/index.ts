import type { ChainName } from '../config/chains.ts';
import { aaveV3Family } from './aaveV3/index.ts';
import { compoundV3Family } from './compoundV3/index.ts';
import { gmxV2Family } from './gmxV2/index.ts';
import { morphoBlueFamily } from './morphoBlue/index.ts';
import { uniswapV3Family } from './uniswapV3/index.ts';
import { uniswapV4Family } from './uniswapV4/index.ts';
import type { AnyFamily } from './types.ts';

/** The slugs of spec 4.3 no family serves yet: they answer 404 protocol_not_served (after the API key). */
const NOT_YET_SERVED: readonly SpecProtocol[] = [];

interface SpecProtocol {
  slug: string;
  protocol: string;
  alias: string;
  chain: ChainName;
}

/**
 * The families this service serves: routes, OpenAPI, CLI commands and MCP tools are generated from these
 * declarations. A spec slug without a family here answers 404 protocol_not_served (after the API key).
 */
export const FAMILIES: readonly AnyFamily[] = [aaveV3Family, compoundV3Family, morphoBlueFamily, uniswapV3Family, uniswapV4Family, gmxV2Family];

/** The six slugs of spec 4.3, with the protocol each stands for, its own name and its chain: the served ones from their families. */
export const SPEC_PROTOCOLS: readonly SpecProtocol[] = [
  ...FAMILIES.map((f) => ({ slug: f.slug, protocol: f.protocol, alias: f.aliases[0]!, chain: f.chains[0] })),
  ...NOT_YET_SERVED,
];

/** The family a slug or an alias names. */
export const familyOf = (slugOrAlias: string): AnyFamily | undefined =>
  FAMILIES.find((f) => f.slug === slugOrAlias || f.aliases.includes(slugOrAlias));

export type { AnyFamily, ProtocolFamily } from './types.ts';
