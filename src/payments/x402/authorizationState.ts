import { decodeEventLog, getAddress, isAddressEqual, parseAbi, type Address, type Hex } from 'viem';
import type { TransactionReceiptInfo } from '../../chain/types.ts';
import type { AuthorizationIdentity } from './claim.ts';

/** The event a token emits when it spends an authorization (the chain worker's findAuthorizationUse reads the same). */
const eip3009StateAbi = parseAbi(['event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)']);

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
