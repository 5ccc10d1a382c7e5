import { z } from 'zod';
import { Address, UintString } from '../common/configFields.ts';

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
