/**
 * x402 settlement purposes for the chain worker's tests against the run's devnet: a fresh payer holding USDC signs a
 * real EIP-3009 authorization (EIP-712). Not used by production code.
 */
import { randomBytes } from 'node:crypto';
import { numberToHex, toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type LocalAccount } from 'viem/accounts';
import type { ChainConfig } from '../../src/config/chainConfig.ts';
import { devnetChain, devnetWalletClient } from '../../src/devnet/clients.ts';
import { eip3009TokenAbi, testStablecoinAbi } from '../../src/devnet/contracts.ts';
import type { ChainClient } from '../../src/chain/client.ts';
import type { X402SettlementPurpose } from '../../src/chain/types.ts';

/** Gives an account 1 ETH of the devnet's native coin (anvil_setBalance): a settler or payer of its own. */
export async function fundNative(client: Pick<ChainClient, 'request'>, account: Address): Promise<void> {
  await client.request({ method: 'anvil_setBalance' as 'eth_chainId', params: [account, numberToHex(10n ** 18n)] as unknown as undefined });
}

/** A payer holding USDC, and the settlement purpose of one authorization it signs (to the treasury by default). */
export async function x402Payment(
  config: ChainConfig,
  client: Pick<ChainClient, 'request' | 'readContract'>,
  opts: { to?: Address; token?: Address } = {},
): Promise<X402SettlementPurpose> {
  const usdc = config.tokens.find((t) => t.symbol === 'USDC')!;
  const [, domainName, domainVersion] = await client.readContract({ address: usdc.address, abi: eip3009TokenAbi, functionName: 'eip712Domain' });
  const key = generatePrivateKey();
  const payer = privateKeyToAccount(key);
  await fundNative(client, payer.address);
  await devnetWalletClient(devnetChain(config), key).writeContractSync({ address: usdc.address, abi: testStablecoinAbi, functionName: 'mint', args: [payer.address, 10_000_000n] });
  const authorization = {
    from: payer.address,
    to: opts.to ?? config.treasury,
    value: '1234567',
    validAfter: '0',
    validBefore: (BigInt(Math.floor(Date.now() / 1000)) + 3_600n).toString(),
    nonce: toHex(randomBytes(32)),
  };
  const signature = await signTransferWithAuthorization(payer, { name: domainName, version: domainVersion, chainId: config.chainId, verifyingContract: usdc.address }, {
    ...authorization,
    value: BigInt(authorization.value),
    validAfter: 0n,
    validBefore: BigInt(authorization.validBefore),
  });
  return { kind: 'x402Settlement', token: opts.token ?? usdc.address, authorization, signature };
}

/** The fields of EIP-3009's `TransferWithAuthorization` and `ReceiveWithAuthorization` (the same for both). */
export const EIP3009_AUTHORIZATION_FIELDS = [
  { name: 'from', type: 'address' },
  { name: 'to', type: 'address' },
  { name: 'value', type: 'uint256' },
  { name: 'validAfter', type: 'uint256' },
  { name: 'validBefore', type: 'uint256' },
  { name: 'nonce', type: 'bytes32' },
] as const;

/** EIP-3009's `TransferWithAuthorization`, signed as EIP-712 typed data over the token's domain. */
export function signTransferWithAuthorization(
  signer: Pick<LocalAccount, 'signTypedData'>,
  domain: { name: string; version: string; chainId: number; verifyingContract: Address },
  message: { from: Address; to: Address; value: bigint; validAfter: bigint; validBefore: bigint; nonce: Hex },
): Promise<Hex> {
  return signer.signTypedData({
    domain,
    types: { TransferWithAuthorization: EIP3009_AUTHORIZATION_FIELDS },
    primaryType: 'TransferWithAuthorization',
    message,
  });
}
