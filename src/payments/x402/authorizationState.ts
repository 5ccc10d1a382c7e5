import { parseAbi, type Hash, type PublicClient } from 'viem';
import type { AuthorizationIdentity } from './claim.ts';

export const eip3009StateAbi = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
]);

/** Whether the token has spent (or the payer canceled) this authorization: the on-chain lock. */
export function readAuthorizationState(client: PublicClient, id: AuthorizationIdentity): Promise<boolean> {
  return client.readContract({ address: id.asset, abi: eip3009StateAbi, functionName: 'authorizationState', args: [id.from, id.nonce] });
}

/**
 * The transaction that spent an authorization, found by its AuthorizationUsed event; undefined when it was
 * not spent (or was canceled). For a claim whose settle outcome was lost (a crash after broadcast): the
 * chain says whether it was paid and by which transaction. `fromBlock` bounds the search (RPC providers
 * limit log ranges): the block before the claim was made is enough.
 */
export async function findAuthorizationTransaction(
  client: PublicClient,
  id: AuthorizationIdentity,
  fromBlock: bigint,
): Promise<Hash | undefined> {
  const logs = await client.getLogs({
    address: id.asset,
    event: eip3009StateAbi[1],
    args: { authorizer: id.from, nonce: id.nonce },
    fromBlock,
    toBlock: 'latest',
  });
  return logs[0]?.transactionHash ?? undefined;
}
