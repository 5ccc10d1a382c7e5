import { AgentWalletError } from '../../lib/errors.ts';

/**
 * What a protocol endpoint refuses, as values with codes (src/gateway/routes/protocols.ts turns them into the API's
 * error body). Input that is well formed but does not fit the protocol's state (a token it does not list, an
 * amount above the wallet's balance) is the caller's to fix: 400 with the field; a read the chain did not answer
 * is ours: 502.
 */
export type ProtocolErrorCode =
  | 'unknown_token' // the protocol lists no such token (symbol or address) here
  | 'unknown_market' // no such market
  | 'ambiguous_market' // a pair names several markets: give the market id
  | 'invalid_amount' // more decimals than the token has, or zero
  | 'insufficient_balance' // the wallet holds less than the amount
  | 'nothing_to_repay' // no debt
  | 'nothing_to_withdraw' // nothing supplied
  | 'amount_above_debt' // a repay larger than the debt
  | 'amount_above_supplied' // a withdraw larger than what is supplied
  | 'conflicting_position' // the position rules the action out (e.g. a Comet borrow while base is supplied)
  | 'unknown_pool' // the deployment offers no such pool (pair and fee tier, or pool key)
  | 'invalid_route' // a route that does not join token_in to token_out through offered pools
  | 'same_token' // token_in and token_out are one token
  | 'price_impact_too_high' // the swap would move the price past max_price_impact_bps
  | 'slippage_exceeded' // the swap's price already lies past its bound (amount_in_maximum)
  | 'insufficient_liquidity' // the pools cannot fill the amount (the quoter reverted)
  | 'unknown_position' // no such position of the wallet (a liquidity NFT, a perp position)
  | 'invalid_price' // a price field that does not fit the order (a trigger price on a market order, none on a limit order)
  | 'unknown_order' // no such pending order of the wallet (executed, cancelled, or another's)
  | 'order_not_updatable' // the order's type cannot be changed (a market order: only limit orders can)
  | 'unknown_request' // no such pending deposit or withdrawal of the wallet (executed, cancelled, or another's)
  | 'request_not_cancellable' // the protocol's keeper is still due to act on it: cancellable later (details say when)
  | 'nothing_to_claim' // no fees are claimable
  | 'execution_fee_too_low' // a perp order's execution fee is below what GMX's keeper needs at the current gas price
  | 'order_not_executable' // GMX's simulated execution of the order fails now: protocol_error says why
  | 'protocol_not_configured' // this deployment does not serve the protocol on that chain
  | 'protocol_unavailable' // the configured deployment cannot be used now (e.g. a contract address gone stale)
  | 'protocol_read_failed'; // a read of the protocol's contracts failed

const STATUS: Readonly<Record<ProtocolErrorCode, number>> = {
  unknown_token: 400,
  unknown_market: 400,
  ambiguous_market: 400,
  invalid_amount: 400,
  insufficient_balance: 400,
  nothing_to_repay: 400,
  nothing_to_withdraw: 400,
  amount_above_debt: 400,
  amount_above_supplied: 400,
  conflicting_position: 400,
  unknown_pool: 400,
  invalid_route: 400,
  same_token: 400,
  price_impact_too_high: 400,
  slippage_exceeded: 400,
  insufficient_liquidity: 400,
  unknown_position: 400,
  invalid_price: 400,
  unknown_order: 400,
  order_not_updatable: 400,
  unknown_request: 400,
  request_not_cancellable: 400,
  nothing_to_claim: 400,
  execution_fee_too_low: 400,
  order_not_executable: 400,
  protocol_not_configured: 404,
  protocol_unavailable: 503,
  protocol_read_failed: 502,
};

export class ProtocolError extends AgentWalletError<ProtocolErrorCode> {
  override readonly name = 'ProtocolError';
  readonly status: number;
  /** The input field at fault (the error body's `field`), when one is. */
  readonly field: string | undefined;

  constructor(code: ProtocolErrorCode, message: string, opts: { field?: string; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(code, message, { details: opts.details, cause: opts.cause });
    this.status = STATUS[code];
    this.field = opts.field;
  }
}

/** A revert of the protocol, decoded to its own error: Aave's numeric codes by name, Comet's and Morpho's errors. */
export interface ProtocolRevert {
  /** The protocol's name for it, e.g. COLLATERAL_CANNOT_COVER_NEW_BORROW, NotCollateralized, INSUFFICIENT_COLLATERAL. */
  name: string;
  /** The raw code where the protocol has one (Aave's "36"). */
  code?: string;
  /** What it means, in words. */
  message: string;
}
