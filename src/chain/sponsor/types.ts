import type { Address, Hex } from 'viem';
import type { SponsoredOperation, SponsorshipWindow } from '../paymaster.ts';

/** The paymaster fields of a v0.7 UserOperation, as a sponsor answers them. */
export interface SponsorFields {
  paymaster: Address;
  paymasterData: Hex;
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
}

/**
 * Placeholder paymaster fields for estimation (ERC-7677 `pm_getPaymasterStubData`): paymasterData of the final
 * size that validation does not revert on, and the paymaster's gas limits, which the operation is then priced
 * with. `isFinal`: the data is already the final one (a paymaster that does not sign per operation): no final call.
 */
export interface SponsorStub extends SponsorFields {
  isFinal: boolean;
}

/** The operation a sponsor is asked about: every field but paymasterData and the owner's signature. */
export type UnsponsoredOperation = Omit<SponsoredOperation, 'paymasterVerificationGasLimit' | 'paymasterPostOpGasLimit'> & {
  sender: Address;
  nonce: bigint;
};

/**
 * Who sponsors a chain's operations (the chain's `sponsor` configuration): the built-in VerifyingPaymaster signer
 * (builtin.ts) or an ERC-7677 paymaster service (erc7677.ts). The preparer asks `stub` before sizing the
 * operation's gas and `final` once its gas fields are fixed, just before the owner signs.
 */
export interface Sponsor {
  readonly kind: 'builtin' | 'erc7677';
  /** Where the sponsorships come from, for messages (a URL's origin only: it may carry an API key). */
  readonly origin: string;
  stub(op: UnsponsoredOperation): Promise<SponsorStub>;
  /**
   * The paymaster fields the operation is sent with: `op` carries the stub's paymaster and gas limits and its final
   * gas fields, which the sponsorship covers. `window` is the validity the service asks for (the built-in signer
   * signs it; a paymaster service picks its own).
   */
  final(op: SponsoredOperation & { paymaster: Address }, window: SponsorshipWindow): Promise<SponsorFields>;
}
