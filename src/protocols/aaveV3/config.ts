import { z } from 'zod';
import { Address } from '../common/configFields.ts';

/** Aave v3 (a chain's `protocols.aaveV3`): the Pool and the read helpers a client needs (the provider registers the oracle and data provider too). */
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
