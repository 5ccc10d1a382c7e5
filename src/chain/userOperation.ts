import { encodeFunctionData, getAddress, isAddressEqual, type Address, type Hex } from 'viem';
import type { LocalAccount } from 'viem/accounts';
import { getUserOperationHash, toPackedUserOperation, type PackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import type { SignedUserOperation } from '../api/v1alpha1/index.ts';
import { simpleAccountFactoryAbi } from './abi.ts';
import { ChainError } from './errors.ts';
import type { OperationGasLimits } from './gas.ts';
import { signSponsorship, type SponsorshipWindow } from './paymaster.ts';

/** A v0.7 UserOperation in viem's unpacked form, with every field the worker fills. */
export type UserOperation07 = UserOperation<'0.7'>;

export interface BuildOperationParameters {
  chainId: number;
  entryPoint: Address;
  sender: Address;
  nonce: bigint;
  /** Present only for the wallet's first operation (nonce 0, no code yet). */
  deployment?: { factory: Address; owner: Address; salt: bigint };
  callData: Hex;
  gas: OperationGasLimits;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  sponsorship: { paymaster: Address; signer: LocalAccount; window: SponsorshipWindow };
  owner: LocalAccount;
}

/** `createAccount(owner, salt)` on the factory: the factoryData of a wallet's first operation. */
export const encodeFactoryData = (owner: Address, salt: bigint): Hex =>
  encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: 'createAccount', args: [owner, salt] });

/** The operation's fields before its paymasterData and signature: what the sponsorship hash covers. */
export function sponsoredOperation(p: Omit<BuildOperationParameters, 'owner' | 'entryPoint' | 'chainId'>): UserOperation07 {
  return {
    sender: p.sender,
    nonce: p.nonce,
    ...(p.deployment && { factory: p.deployment.factory, factoryData: encodeFactoryData(p.deployment.owner, p.deployment.salt) }),
    callData: p.callData,
    callGasLimit: p.gas.callGasLimit,
    verificationGasLimit: p.gas.verificationGasLimit,
    preVerificationGas: p.gas.preVerificationGas,
    maxFeePerGas: p.maxFeePerGas,
    maxPriorityFeePerGas: p.maxPriorityFeePerGas,
    paymaster: p.sponsorship.paymaster,
    paymasterVerificationGasLimit: p.gas.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: p.gas.paymasterPostOpGasLimit,
    signature: '0x',
  };
}

/**
 * Builds a sponsored UserOperation and signs it: the paymaster signer signs the sponsorship hash first (it
 * covers every field but paymasterData and signature), then the owner signs the userOpHash as an Ethereum
 * signed message, which is what SimpleAccount v0.7 `_validateSignature` recovers.
 */
export async function buildSignedOperation(p: BuildOperationParameters): Promise<SignedUserOperation> {
  const op = sponsoredOperation(p);
  op.paymasterData = await signSponsorship({
    userOperation: op,
    chainId: p.chainId,
    paymaster: p.sponsorship.paymaster,
    window: p.sponsorship.window,
    signer: p.sponsorship.signer,
  });
  const hash = getUserOperationHash({ userOperation: op, entryPointAddress: p.entryPoint, entryPointVersion: '0.7', chainId: p.chainId });
  op.signature = await p.owner.signMessage({ message: { raw: hash } });
  return toSignedUserOperation(op, { hash, entryPoint: p.entryPoint, chainId: p.chainId });
}

/**
 * The owner's signature of a sponsored operation (its paymaster fields final): the userOpHash as an Ethereum signed
 * message, what SimpleAccount v0.7 `_validateSignature` recovers.
 */
export async function signAsOwner(op: UserOperation07, p: { owner: LocalAccount; entryPoint: Address; chainId: number }): Promise<SignedUserOperation> {
  const hash = getUserOperationHash({ userOperation: op, entryPointAddress: p.entryPoint, entryPointVersion: '0.7', chainId: p.chainId });
  const signature = await p.owner.signMessage({ message: { raw: hash } });
  return toSignedUserOperation({ ...op, signature }, { hash, entryPoint: p.entryPoint, chainId: p.chainId });
}

/** viem form → the persisted wire form (bigints as decimal strings). */
export function toSignedUserOperation(
  op: UserOperation07,
  meta: { hash: Hex; entryPoint: Address; chainId: number },
): SignedUserOperation {
  return {
    sender: op.sender,
    nonce: op.nonce.toString(),
    ...(op.factory && { factory: op.factory, factoryData: op.factoryData ?? '0x' }),
    callData: op.callData,
    callGasLimit: op.callGasLimit.toString(),
    verificationGasLimit: op.verificationGasLimit.toString(),
    preVerificationGas: op.preVerificationGas.toString(),
    maxFeePerGas: op.maxFeePerGas.toString(),
    maxPriorityFeePerGas: op.maxPriorityFeePerGas.toString(),
    ...(op.paymaster && {
      paymaster: op.paymaster,
      paymasterVerificationGasLimit: (op.paymasterVerificationGasLimit ?? 0n).toString(),
      paymasterPostOpGasLimit: (op.paymasterPostOpGasLimit ?? 0n).toString(),
      paymasterData: op.paymasterData ?? '0x',
    }),
    signature: op.signature,
    hash: meta.hash,
    entryPoint: meta.entryPoint,
    chainId: meta.chainId,
  };
}

/** The persisted wire form → viem form. */
export function fromSignedUserOperation(s: SignedUserOperation): UserOperation07 {
  return {
    sender: getAddress(s.sender),
    nonce: BigInt(s.nonce),
    ...(s.factory && { factory: getAddress(s.factory), factoryData: (s.factoryData ?? '0x') as Hex }),
    callData: s.callData as Hex,
    callGasLimit: BigInt(s.callGasLimit),
    verificationGasLimit: BigInt(s.verificationGasLimit),
    preVerificationGas: BigInt(s.preVerificationGas),
    maxFeePerGas: BigInt(s.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(s.maxPriorityFeePerGas),
    ...(s.paymaster && {
      paymaster: getAddress(s.paymaster),
      paymasterVerificationGasLimit: BigInt(s.paymasterVerificationGasLimit ?? '0'),
      paymasterPostOpGasLimit: BigInt(s.paymasterPostOpGasLimit ?? '0'),
      paymasterData: (s.paymasterData ?? '0x') as Hex,
    }),
    signature: s.signature as Hex,
  };
}

/** EntryPoint v0.7 getUserOpHash, computed off chain. */
export const userOperationHash = (op: UserOperation07, entryPoint: Address, chainId: number): Hex =>
  getUserOperationHash({ userOperation: op, entryPointAddress: entryPoint, entryPointVersion: '0.7', chainId });

/** The packed form handleOps takes. */
export const packUserOperation = (op: UserOperation07): PackedUserOperation => toPackedUserOperation(op);

/**
 * Checks that a submitted operation is for this chain and EntryPoint and that its `hash` is the hash of its
 * fields (so the bundler's bookkeeping by hash cannot be fooled). Signatures are checked by the EntryPoint
 * itself when the bundle is simulated.
 */
export function verifySubmittedOperation(s: SignedUserOperation, expected: { entryPoint: Address; chainId: number }): UserOperation07 {
  if (s.chainId !== expected.chainId) {
    throw new ChainError('invalid_operation', `operation is for chain ${s.chainId}, this worker serves ${expected.chainId}`);
  }
  if (!isAddressEqual(s.entryPoint as Address, expected.entryPoint)) {
    throw new ChainError('invalid_operation', `operation is for EntryPoint ${s.entryPoint}, not ${expected.entryPoint}`);
  }
  let op: UserOperation07;
  try {
    op = fromSignedUserOperation(s);
  } catch (cause) {
    throw new ChainError('invalid_operation', 'operation fields are malformed', { cause });
  }
  const hash = userOperationHash(op, expected.entryPoint, expected.chainId);
  if (hash.toLowerCase() !== s.hash.toLowerCase()) {
    throw new ChainError('invalid_operation', `operation hash ${s.hash} does not match its fields (${hash})`);
  }
  return op;
}
