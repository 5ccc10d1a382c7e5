/**
 * The built-in sponsor's paymaster on chain: eth-infinitism's v0.7 VerifyingPaymaster (the bytecode of
 * @account-abstraction/contracts 0.7.0, as the devnet deploys it) and its deposit and stake in the EntryPoint.
 * Small functions over viem clients, each one transaction or one read; the CLI (src/cli/paymaster.ts) and the
 * rotation (rotation.ts) compose them. Against any RPC URL: nothing here knows the devnet.
 */
import paymasterArtifact from '@account-abstraction/contracts/artifacts/VerifyingPaymaster.json' with { type: 'json' };
import { encodeDeployData, encodeFunctionData, type Abi, type Account, type Address, type Chain, type Hash, type Hex, type PublicClient, type Transport, type WalletClient } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';

export const paymasterAbi = paymasterArtifact.abi as Abi;

/** The canonical EntryPoint v0.7 (the same address on every chain). */
export const ENTRY_POINT_V07: Address = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';

export type Owner = WalletClient<Transport, Chain | undefined, Account>;

export function paymasterDeployData(entryPoint: Address, verifyingSigner: Address): Hex {
  return encodeDeployData({ abi: paymasterAbi, bytecode: paymasterArtifact.bytecode as Hex, args: [entryPoint, verifyingSigner] });
}

/** What the EntryPoint and the paymaster say about it. `code: false`: nothing is deployed there. */
export interface PaymasterStatus {
  address: Address;
  code: boolean;
  owner?: Address;
  verifyingSigner?: Address;
  entryPoint?: Address;
  deposit: bigint;
  staked: boolean;
  stake: bigint;
  unstakeDelaySec: number;
  /** Unix seconds when an unlocked stake may be withdrawn; 0 while locked (or when there is none). */
  withdrawTime: number;
}

export async function readPaymaster(client: PublicClient, entryPoint: Address, address: Address): Promise<PaymasterStatus> {
  const code = await client.getCode({ address });
  const info = await client.readContract({ address: entryPoint, abi: entryPoint07Abi, functionName: 'getDepositInfo', args: [address] });
  const base = { address, deposit: info.deposit, staked: info.staked, stake: info.stake, unstakeDelaySec: info.unstakeDelaySec, withdrawTime: info.withdrawTime };
  if (code === undefined || code === '0x') return { ...base, code: false };
  const read = (functionName: 'owner' | 'verifyingSigner' | 'entryPoint') =>
    client.readContract({ address, abi: paymasterAbi, functionName }).then((v) => v as Address, () => undefined);
  const [owner, verifyingSigner, ep] = await Promise.all([read('owner'), read('verifyingSigner'), read('entryPoint')]);
  return { ...base, code: true, ...(owner && { owner }), ...(verifyingSigner && { verifyingSigner }), ...(ep && { entryPoint: ep }) };
}

/** One sent transaction: its hash as soon as the node has it (callers record it before waiting). */
export type Sent = { hash: Hash };

/** Deploys a VerifyingPaymaster whose owner is the sender (Ownable(msg.sender)) and whose signer is `signer`. */
export const sendDeploy = async (owner: Owner, entryPoint: Address, signer: Address): Promise<Sent> => ({
  hash: await owner.sendTransaction({ data: paymasterDeployData(entryPoint, signer), chain: owner.chain }),
});

/** EntryPoint.depositTo(paymaster): anyone may fund a paymaster's deposit. */
export const sendDeposit = async (from: Owner, entryPoint: Address, paymaster: Address, value: bigint): Promise<Sent> => ({
  hash: await from.sendTransaction({
    to: entryPoint,
    value,
    data: encodeFunctionData({ abi: entryPoint07Abi, functionName: 'depositTo', args: [paymaster] }),
    chain: from.chain,
  }),
});

const ownerCall = async (owner: Owner, paymaster: Address, data: Hex, value = 0n): Promise<Sent> => ({
  hash: await owner.sendTransaction({ to: paymaster, data, value, chain: owner.chain }),
});

/** The owner's addStake: adds `value` to the stake and sets the delay (never below the current one). */
export const sendAddStake = (owner: Owner, paymaster: Address, unstakeDelaySec: number, value: bigint) =>
  ownerCall(owner, paymaster, encodeFunctionData({ abi: paymasterAbi, functionName: 'addStake', args: [unstakeDelaySec] }), value);

/** The owner's unlockStake: the stake becomes withdrawable after its unstake delay (and stops counting as staked). */
export const sendUnlockStake = (owner: Owner, paymaster: Address) =>
  ownerCall(owner, paymaster, encodeFunctionData({ abi: paymasterAbi, functionName: 'unlockStake' }));

/** The owner's withdrawStake(to): the whole unlocked stake, once its withdrawTime has passed. */
export const sendWithdrawStake = (owner: Owner, paymaster: Address, to: Address) =>
  ownerCall(owner, paymaster, encodeFunctionData({ abi: paymasterAbi, functionName: 'withdrawStake', args: [to] }));

/** The owner's withdrawTo(to, amount): from the paymaster's deposit in the EntryPoint. */
export const sendWithdrawDeposit = (owner: Owner, paymaster: Address, to: Address, amount: bigint) =>
  ownerCall(owner, paymaster, encodeFunctionData({ abi: paymasterAbi, functionName: 'withdrawTo', args: [to, amount] }));

export class TransactionFailed extends Error {
  override readonly name = 'TransactionFailed';
  constructor(readonly hash: Hash, what: string) {
    super(`${what}: transaction ${hash} reverted`);
  }
}

/** Waits for a sent transaction; a revert is an error naming what was meant. Returns the created contract, if any. */
export async function confirm(client: PublicClient, sent: Sent, what: string): Promise<{ hash: Hash; contractAddress?: Address }> {
  const receipt = await client.waitForTransactionReceipt({ hash: sent.hash, timeout: 300_000 });
  if (receipt.status !== 'success') throw new TransactionFailed(sent.hash, what);
  return { hash: sent.hash, ...(receipt.contractAddress && { contractAddress: receipt.contractAddress }) };
}
