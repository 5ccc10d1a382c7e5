import type { Address, Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { ChainConfig } from '../config/chainConfig.ts';
import { erc20BalanceAbi, simpleAccountFactoryAbi } from './abi.ts';
import type { ChainClient } from './client.ts';
import { deriveOwnerAccount, walletSalt } from './ownerKey.ts';
import type { WalletBalances, WalletInfo, WalletRef } from './types.ts';

/** Everything the worker knows about one wallet. */
export interface ResolvedWallet extends WalletInfo {
  owner: PrivateKeyAccount;
  salt: bigint;
}

export interface WalletResolver {
  /** Address (cached per API client and agent) and whether it has code (re-read until it is true). */
  resolve(ref: WalletRef): Promise<ResolvedWallet>;
  balances(ref: WalletRef): Promise<WalletBalances>;
  /** Runtime code of the factory's account implementation (for simulating undeployed wallets). */
  implementationCode(): Promise<Hex>;
}

/**
 * Wallet address = SimpleAccountFactory.getAddress(owner, salt), owner derived from the API client and salt
 * from the agent id (see ownerKey.ts). Addresses never change, so they are cached; so is "deployed" once true.
 */
export function createWalletResolver(client: ChainClient, config: ChainConfig, serviceSecret: Uint8Array | string): WalletResolver {
  const owners = new Map<string, PrivateKeyAccount>();
  const wallets = new Map<string, { address: Address; deployed: boolean; salt: bigint }>();
  let implCode: Promise<Hex> | undefined;

  const ownerOf = (apiClient: string): PrivateKeyAccount => {
    let owner = owners.get(apiClient);
    if (!owner) {
      owner = deriveOwnerAccount(serviceSecret, apiClient);
      owners.set(apiClient, owner);
    }
    return owner;
  };
  const keyOf = (ref: WalletRef) => JSON.stringify([ref.apiClient, ref.agentId]);
  const hasCode = async (address: Address) => {
    const code = await client.getCode({ address });
    return code !== undefined && code !== '0x';
  };

  async function resolve(ref: WalletRef): Promise<ResolvedWallet> {
    const owner = ownerOf(ref.apiClient);
    const key = keyOf(ref);
    let w = wallets.get(key);
    if (!w) {
      const salt = walletSalt(ref.agentId);
      const address = await client.readContract({
        address: config.simpleAccountFactory,
        abi: simpleAccountFactoryAbi,
        functionName: 'getAddress',
        args: [owner.address, salt],
      });
      w = { address, deployed: false, salt };
      wallets.set(key, w);
    }
    if (!w.deployed) w.deployed = await hasCode(w.address);
    return { address: w.address, deployed: w.deployed, owner, salt: w.salt };
  }

  return {
    resolve,
    async balances(ref) {
      const w = await resolve(ref);
      const [nativeWei, ...raws] = await Promise.all([
        client.getBalance({ address: w.address }),
        ...config.tokens.map((t) =>
          client.readContract({ address: t.address, abi: erc20BalanceAbi, functionName: 'balanceOf', args: [w.address] }),
        ),
      ]);
      return {
        address: w.address,
        deployed: w.deployed,
        nativeWei: nativeWei!.toString(),
        tokens: config.tokens.map((t, i) => ({ symbol: t.symbol, address: t.address, decimals: t.decimals, raw: raws[i]!.toString() })),
      };
    },
    implementationCode() {
      implCode ??= (async () => {
        const impl = await client.readContract({
          address: config.simpleAccountFactory,
          abi: simpleAccountFactoryAbi,
          functionName: 'accountImplementation',
        });
        const code = await client.getCode({ address: impl });
        if (!code || code === '0x') throw new Error(`account implementation ${impl} has no code`);
        return code;
      })().catch((e) => {
        implCode = undefined; // do not cache a failure
        throw e;
      });
      return implCode;
    },
  };
}
