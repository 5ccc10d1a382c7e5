import { erc20Abi, isAddressEqual, parseAbi, type Address, type Hex } from 'viem';
import type { ChainConfig } from '../../config/chainConfig.ts';
import type { ChainClient } from '../client.ts';
import { ChainError, rethrowAsRpcUnavailable } from '../errors.ts';
import type { ChainWorker } from '../types.ts';

/** The most blocks findAuthorizationUse looks back: RPC providers bound a log query's range. */
export const MAX_LOOKBACK_BLOCKS = 100_000n;

const eip3009StateAbi = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
]);
const erc1271Abi = parseAbi(['function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)']);
const ERC1271_MAGIC_VALUE = '0x1626ba7e';

export type NamedReads = Pick<ChainWorker, 'getCode' | 'isValidSignature' | 'tokenBalance' | 'authorizationState' | 'findAuthorizationUse'>;

/**
 * The worker's named reads: each one question about the chain (a balance of a configured token, the state of an
 * EIP-3009 authorization), so the controller and the faucet need no RPC URL of their own and no caller gets a
 * generic eth_call through them. Tokens are the chain's configured ones only.
 */
export function createNamedReads(client: ChainClient, config: Pick<ChainConfig, 'name' | 'tokens'>): NamedReads {
  function configured(token: Address, eip3009: boolean): Address {
    const t = config.tokens.find((x) => isAddressEqual(x.address, token));
    if (!t || (eip3009 && !t.eip3009)) {
      throw new ChainError('invalid_request', `${token} is not ${eip3009 ? 'an EIP-3009 token' : 'a token'} configured on ${config.name}`);
    }
    return t.address;
  }

  return {
    async getCode(address) {
      const code = await client.getCode({ address }).catch(rethrowAsRpcUnavailable);
      return code ?? '0x';
    },

    async isValidSignature(account, digest, signature) {
      const code = await client.getCode({ address: account }).catch(rethrowAsRpcUnavailable);
      if (!code || code === '0x') return false;
      try {
        const answer = await client.readContract({ address: account, abi: erc1271Abi, functionName: 'isValidSignature', args: [digest, signature] });
        return answer.toLowerCase() === ERC1271_MAGIC_VALUE;
      } catch {
        // A wallet that reverts refuses the signature. A node that fails here failed the getCode just before
        // more likely than not; either way the signature is not shown valid.
        return false;
      }
    },

    async tokenBalance(token, owner, block) {
      const address = configured(token, false);
      return client
        .readContract({ address, abi: erc20Abi, functionName: 'balanceOf', args: [owner], ...(block !== undefined && { blockNumber: block }) })
        .catch(rethrowAsRpcUnavailable);
    },

    async authorizationState({ token, authorizer, nonce }) {
      const address = configured(token, true);
      return client
        .readContract({ address, abi: eip3009StateAbi, functionName: 'authorizationState', args: [authorizer, nonce] })
        .catch(rethrowAsRpcUnavailable);
    },

    async findAuthorizationUse({ token, authorizer, nonce }, lookbackBlocks) {
      const address = configured(token, true);
      if (lookbackBlocks < 0n || lookbackBlocks > MAX_LOOKBACK_BLOCKS) {
        throw new ChainError('invalid_request', `a lookback of ${lookbackBlocks} blocks is outside 0..${MAX_LOOKBACK_BLOCKS}`);
      }
      try {
        const head = await client.getBlockNumber({ cacheTime: 0 });
        const logs = await client.getLogs({
          address,
          event: eip3009StateAbi[1],
          args: { authorizer, nonce },
          fromBlock: head > lookbackBlocks ? head - lookbackBlocks : 0n,
          toBlock: 'latest',
        });
        return (logs[0]?.transactionHash ?? undefined) as Hex | undefined;
      } catch (e) {
        return rethrowAsRpcUnavailable(e);
      }
    },
  };
}
