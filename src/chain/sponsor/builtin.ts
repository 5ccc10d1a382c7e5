import { concat, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type LocalAccount } from 'viem/accounts';
import { GAS } from '../gas.ts';
import { encodeSponsorshipWindow, signSponsorship } from '../paymaster.ts';
import type { Sponsor, SponsorFields } from './types.ts';

/** A window no real sponsorship has, as wide as any (uint48): the stub's size and cost are the final one's. */
const STUB_WINDOW = { validUntil: 2 ** 40, validAfter: 0 };

/**
 * The stub's signature: a real one by a throwaway key, so it recovers to an address that is not the paymaster's
 * signer and validation fails softly (SIG_VALIDATION_FAILED) wherever a bundler simulates the draft it is in. A
 * signature that does not recover makes OpenZeppelin's ECDSA revert, and a bundler then refuses to price the draft.
 */
const STUB_SIGNATURE = privateKeyToAccount(generatePrivateKey()).signMessage({ message: 'agent-wallet paymaster stub' });

/** The built-in sponsor: this service signs VerifyingPaymaster sponsorships with the configured signer key. */
export function createBuiltinSponsor(p: { chainId: number; paymaster: Address; signer: LocalAccount }): Sponsor {
  const limits = { paymasterVerificationGasLimit: GAS.paymasterVerification, paymasterPostOpGasLimit: GAS.paymasterPostOp };
  return {
    kind: 'builtin',
    origin: 'the built-in paymaster signer',
    async stub() {
      return { paymaster: p.paymaster, paymasterData: concat([encodeSponsorshipWindow(STUB_WINDOW), await STUB_SIGNATURE]), ...limits, isFinal: false };
    },
    async final(op, window): Promise<SponsorFields> {
      const paymasterData = await signSponsorship({ userOperation: op, chainId: p.chainId, paymaster: p.paymaster, window, signer: p.signer });
      return { paymaster: p.paymaster, paymasterData, paymasterVerificationGasLimit: op.paymasterVerificationGasLimit ?? 0n, paymasterPostOpGasLimit: op.paymasterPostOpGasLimit ?? 0n };
    },
  };
}
