import { concat, type Address } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { GAS } from '../gas.ts';
import { DUMMY_SIGNATURE, encodeSponsorshipWindow, signSponsorship } from '../paymaster.ts';
import type { Sponsor, SponsorFields } from './types.ts';

/** A window no real sponsorship has, as wide as any (uint48): the stub's size and cost are the final one's. */
const STUB_WINDOW = { validUntil: 2 ** 40, validAfter: 0 };

/** The built-in sponsor: this service signs VerifyingPaymaster sponsorships with the configured signer key. */
export function createBuiltinSponsor(p: { chainId: number; paymaster: Address; signer: LocalAccount }): Sponsor {
  const limits = { paymasterVerificationGasLimit: GAS.paymasterVerification, paymasterPostOpGasLimit: GAS.paymasterPostOp };
  return {
    kind: 'builtin',
    origin: 'the built-in paymaster signer',
    async stub() {
      // A well-formed signature that recovers to no signer: validation returns SIG_VALIDATION_FAILED, never reverts.
      return { paymaster: p.paymaster, paymasterData: concat([encodeSponsorshipWindow(STUB_WINDOW), DUMMY_SIGNATURE]), ...limits, isFinal: false };
    },
    async final(op, window): Promise<SponsorFields> {
      const paymasterData = await signSponsorship({ userOperation: op, chainId: p.chainId, paymaster: p.paymaster, window, signer: p.signer });
      return { paymaster: p.paymaster, paymasterData, paymasterVerificationGasLimit: op.paymasterVerificationGasLimit ?? 0n, paymasterPostOpGasLimit: op.paymasterPostOpGasLimit ?? 0n };
    },
  };
}
