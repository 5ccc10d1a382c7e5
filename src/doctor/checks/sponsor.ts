import { zeroAddress } from 'viem';
import { isChainError } from '../../chain/errors.ts';
import { createErc7677Sponsor } from '../../chain/sponsor/erc7677.ts';
import { result, shownUrl, type DoctorCheck } from '../types.ts';

/**
 * An ERC-7677 paymaster service (sponsor.kind 'erc7677') answers pm_getPaymasterStubData for this chain and
 * EntryPoint, naming the configured paymaster. Asked about an operation of a wallet that does not exist (no real
 * operation is ever shown): a service whose sponsorship policy refuses strangers answers with an error, which is
 * a warning here, not a failure; no answer, or another paymaster, fails.
 */
export const sponsorCheck: DoctorCheck = {
  id: 'sponsor',
  summary: 'an ERC-7677 paymaster service answers pm_getPaymasterStubData for the configured paymaster',
  async run(ctx) {
    const { sponsor, chainId, entryPoint, paymaster } = ctx.target.config;
    if (sponsor.kind !== 'erc7677') return [result(ctx, 'sponsor.service', 'ok', 'built-in paymaster signer')];
    const service = createErc7677Sponsor({ url: sponsor.url, chainId, entryPoint, paymaster, ...(sponsor.context && { context: sponsor.context }), timeoutMs: 10_000 });
    const probe = {
      sender: `0x${'00'.repeat(19)}01` as const,
      nonce: 0n,
      callData: '0x' as const,
      callGasLimit: 100_000n,
      verificationGasLimit: 100_000n,
      preVerificationGas: 50_000n,
      maxFeePerGas: await ctx.maxFeePerGas(),
      maxPriorityFeePerGas: 1n,
      paymaster: zeroAddress,
      paymasterData: '0x' as const,
      signature: '0x' as const,
    };
    try {
      const stub = await service.stub(probe as never);
      return [result(ctx, 'sponsor.service', 'ok', `the paymaster service at ${shownUrl(sponsor.url)} sponsors through ${stub.paymaster}`)];
    } catch (e) {
      const message = (e as Error).message;
      // A JSON-RPC refusal (it carries the service's code) is its policy speaking; an answer naming another
      // paymaster is a misconfiguration.
      if (isChainError(e, 'simulation_reverted') && e.details?.rpcCode !== undefined) {
        return [result(ctx, 'sponsor.service', 'warn', message, `check the service's sponsorship policy (context) and that it serves paymaster ${paymaster} on chain ${chainId}`)];
      }
      return [result(ctx, 'sponsor.service', 'fail', message, `check sponsor.url (or AGENT_WALLET_SPONSOR_URL), its API key, that it serves chain ${chainId}, and that paymaster is the one it signs for`)];
    }
  },
};
