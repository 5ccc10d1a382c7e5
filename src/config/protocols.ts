import { z } from 'zod';

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/) as unknown as z.ZodType<`0x${string}`>;
/** A decimal string of a non-negative integer (a uint256 in config files, where a JSON number would lose digits). */
const UintString = z.string().regex(/^(0|[1-9][0-9]*)$/);

/**
 * Where each DeFi protocol of the `/protocols/...` families lives on a chain: contract addresses and, for the
 * permissionless protocols, the markets the deployment offers. In the embedded mode the devnet writes them into
 * its manifest (src/devnet/protocols); in a cluster they are part of each chain's entry in the config file (the
 * Helm chart ships the real testnets' addresses). A protocol a chain does not configure is not served there.
 */

/** Aave v3: the Pool and the read helpers a client needs (the provider registers the oracle and data provider too). */
export const AaveV3ConfigSchema = z.object({
  poolAddressesProvider: Address,
  pool: Address,
  oracle: Address,
  /** AaveProtocolDataProvider: per-reserve configuration and a user's per-reserve balances. */
  protocolDataProvider: Address,
  /** UiPoolDataProviderV3 (periphery): every reserve, or every user reserve, in one call. */
  uiPoolDataProvider: Address,
});
export type AaveV3Config = z.infer<typeof AaveV3ConfigSchema>;

/** Compound v3: one Comet per base asset (the base token, collaterals and prices are read from the Comet). */
export const CompoundV3ConfigSchema = z.object({
  markets: z
    .array(
      z.object({
        /** What callers name the market by, e.g. `cUSDCv3`. */
        name: z.string().min(1),
        comet: Address,
      }),
    )
    .min(1),
});
export type CompoundV3Config = z.infer<typeof CompoundV3ConfigSchema>;

/** One Morpho Blue market: its MarketParams (the market id is their keccak256). */
export const MorphoMarketParamsSchema = z.object({
  loanToken: Address,
  collateralToken: Address,
  oracle: Address,
  irm: Address,
  /** Liquidation LTV, scaled by 1e18 (0.86 = "860000000000000000"). */
  lltv: UintString,
});
export type MorphoMarketParams = z.infer<typeof MorphoMarketParamsSchema>;

/** Morpho Blue: the singleton and the markets offered (markets are permissionless: the deployment lists its own). */
export const MorphoBlueConfigSchema = z.object({
  morpho: Address,
  markets: z.array(MorphoMarketParamsSchema),
});
export type MorphoBlueConfig = z.infer<typeof MorphoBlueConfigSchema>;

/** The protocols a chain serves, by the protocol's own name. */
export const ProtocolsConfigSchema = z
  .object({
    aaveV3: AaveV3ConfigSchema,
    compoundV3: CompoundV3ConfigSchema,
    morphoBlue: MorphoBlueConfigSchema,
  })
  .partial();
export type ProtocolsConfig = z.infer<typeof ProtocolsConfigSchema>;
export type ProtocolKey = keyof ProtocolsConfig;
