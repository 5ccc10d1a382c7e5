import { AgentWalletError } from '../lib/errors.ts';

export type FaucetErrorCode =
  /** The chain's RPC endpoint did not answer, or answered with an error: nothing was sent. */
  | 'chain_unavailable'
  /** The faucet's account holds less aUSD than one drip, or too little native coin for the gas. */
  | 'faucet_empty'
  /** The transfer was sent but no receipt came within the bound; `details.tx_hash` names it. */
  | 'receipt_timeout'
  /** The transfer was mined and reverted (or could not be estimated). */
  | 'transfer_failed'
  /** Too many drips are already waiting their turn on this chain. */
  | 'busy'
  /** The faucet is shutting down. */
  | 'closed';

/** An error the sender raises on purpose; `code` is stable and reaches the client as the `error` of a 503. */
export class FaucetError extends AgentWalletError<FaucetErrorCode> {
  override readonly name = 'FaucetError';
}
