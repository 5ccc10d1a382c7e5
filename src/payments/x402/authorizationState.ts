import { decodeEventLog, getAddress, isAddressEqual, parseAbi, type Address, type Hash, type Hex, type PublicClient } from 'viem';
import type { TransactionReceiptInfo } from '../../chain/types.ts';
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

/** The EIP-3009 authorizations of `token` a transaction spent (its AuthorizationUsed events), as identities. */
export function authorizationsUsedIn(receipt: Pick<TransactionReceiptInfo, 'logs'>, token: Address, chainId: number): AuthorizationIdentity[] {
  const out: AuthorizationIdentity[] = [];
  for (const log of receipt.logs) {
    if (!isAddressEqual(log.address, token)) continue;
    try {
      const e = decodeEventLog({ abi: eip3009StateAbi, eventName: 'AuthorizationUsed', data: log.data, topics: log.topics as [Hex, ...Hex[]], strict: true });
      out.push({ chainId, asset: getAddress(token), from: getAddress(e.args.authorizer), nonce: e.args.nonce.toLowerCase() as Hex });
    } catch {
      // another event
    }
  }
  return out;
}
