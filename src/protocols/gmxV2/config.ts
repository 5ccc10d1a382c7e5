import { z } from 'zod';
import { Address } from '../common/configFields.ts';

/**
 * GMX v2 synthetics (a chain's `protocols.gmxV2`): the contracts perp-v2 talks to, as GMX's own SDK names them
 * (its `configs/contracts.js`), and where its prices come from. The devnet writes its own deployment's; the chart
 * ships Arbitrum Sepolia's from @gmx-io/sdk 1.4.0 (testnet.generated.json). The ExchangeRouter moves with GMX's
 * upgrades: a stale one (no longer a CONTROLLER in the RoleStore) makes the family answer 503, not sign.
 */
export const GmxV2ConfigSchema = z.object({
  dataStore: Address,
  /** Orders, deposits, withdrawals and claims go through its multicall (sendWnt, sendTokens, create…). */
  exchangeRouter: Address,
  /** SyntheticsReader: markets, positions, orders, as GMX's clients read them. */
  reader: Address,
  /** SyntheticsRouter: the spender of token approvals (the ExchangeRouter pulls through it). */
  router: Address,
  orderVault: Address,
  /** Where a deposit's tokens and execution fee are sent (sendTokens/sendWnt) before createDeposit. */
  depositVault: Address,
  /** Where a withdrawal's GM and execution fee are sent (sendTokens/sendWnt) before createWithdrawal. */
  withdrawalVault: Address,
  /** Where orders' lifecycle events are logged (EventLog1/EventLog2): the order follower reads them. */
  eventEmitter: Address,
  referralStorage: Address,
  /** The wrapped native token (WETH): execution fees are paid in it, through sendWnt. */
  wnt: Address,
  /** The markets served (market token addresses); default: every market the Reader lists. */
  markets: z.array(Address).optional(),
  /**
   * GMX's oracle keeper API (`/prices/tickers`, `/tokens`): the prices an integrator reads and simulates with.
   * On a real network GMX's host (an egress the deployment must allow); on the devnet, the devnet's own server.
   */
  oracleUrl: z.url({ protocol: /^https?$/ }),
  /**
   * Headroom on the execution fee over (gas limit × the current gas price), in basis points: the keeper's fee is
   * checked against the gas price when the order is created, which moves between signing and inclusion.
   */
  executionFeeBufferBps: z.int().min(0).max(50_000).default(3_000),
});
export type GmxV2Config = z.infer<typeof GmxV2ConfigSchema>;
