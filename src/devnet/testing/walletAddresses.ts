import { toSimpleSmartAccount } from 'permissionless/accounts';
import type { Address, LocalAccount, PublicClient } from 'viem';
import { simpleAccountFactoryAbi } from '../contracts.ts';

/**
 * The two independent references a wallet address is checked against in tests: the SimpleAccountFactory's
 * own `getAddress(owner, salt)` on chain, and permissionless's `toSimpleSmartAccount` computed off chain.
 */
export async function referenceWalletAddresses(opts: {
  client: PublicClient;
  factory: Address;
  entryPoint: Address;
  owner: LocalAccount;
  salt: bigint;
}): Promise<{ fromFactory: Address; fromPermissionless: Address }> {
  const fromFactory = await opts.client.readContract({
    address: opts.factory,
    abi: simpleAccountFactoryAbi,
    functionName: 'getAddress',
    args: [opts.owner.address, opts.salt],
  });
  const account = await toSimpleSmartAccount({
    client: opts.client,
    owner: opts.owner,
    index: opts.salt,
    entryPoint: { address: opts.entryPoint, version: '0.7' },
    factoryAddress: opts.factory,
  });
  return { fromFactory, fromPermissionless: account.address };
}
