import { privateKeyToAccount } from 'viem/accounts';
import type { ChainConfig } from '../../config/chainConfig.ts';
import { createBuiltinSponsor } from './builtin.ts';
import { createErc7677Sponsor } from './erc7677.ts';
import type { Sponsor } from './types.ts';

export type { Sponsor, SponsorFields, SponsorStub, UnsponsoredOperation } from './types.ts';

/** The chain's sponsor, by its `sponsor` configuration. */
export function createSponsor(config: Pick<ChainConfig, 'name' | 'chainId' | 'entryPoint' | 'paymaster' | 'paymasterSignerKey' | 'sponsor'>): Sponsor {
  const s = config.sponsor;
  if (s.kind === 'erc7677') {
    return createErc7677Sponsor({ url: s.url, chainId: config.chainId, entryPoint: config.entryPoint, paymaster: config.paymaster, context: s.context, timeoutMs: s.timeoutMs });
  }
  if (!config.paymasterSignerKey) throw new Error(`${config.name}: the built-in sponsor needs paymasterSignerKey`);
  return createBuiltinSponsor({ chainId: config.chainId, paymaster: config.paymaster, signer: privateKeyToAccount(config.paymasterSignerKey) });
}
