import {
  concat,
  encodeAbiParameters,
  keccak256,
  pad,
  numberToHex,
  parseSignature,
  serializeCompactSignature,
  signatureToCompactSignature,
  size,
  slice,
  hexToBigInt,
  type Address,
  type Hex,
} from 'viem';
import type { LocalAccount } from 'viem/accounts';
import type { UserOperation } from 'viem/account-abstraction';
import { getInitCode } from 'viem/account-abstraction';

/** The sponsorship window a VerifyingPaymaster signature covers (seconds since the epoch; uint48). */
export interface SponsorshipWindow {
  validUntil: number;
  validAfter: number;
}

/** What the paymaster hash covers: the operation without paymasterData and signature. */
export type SponsoredOperation = Pick<
  UserOperation<'0.7'>,
  | 'sender'
  | 'nonce'
  | 'factory'
  | 'factoryData'
  | 'callData'
  | 'callGasLimit'
  | 'verificationGasLimit'
  | 'preVerificationGas'
  | 'maxFeePerGas'
  | 'maxPriorityFeePerGas'
  | 'paymasterVerificationGasLimit'
  | 'paymasterPostOpGasLimit'
>;

const packUints = (high: bigint, low: bigint): Hex => concat([pad(numberToHex(high), { size: 16 }), pad(numberToHex(low), { size: 16 })]);

/**
 * VerifyingPaymaster v0.7 `getHash(userOp, validUntil, validAfter)`, computed off chain:
 * keccak256(abi.encode(sender, nonce, keccak256(initCode), keccak256(callData), accountGasLimits,
 * uint256(paymasterVerificationGasLimit ‖ postOpGasLimit), preVerificationGas, gasFees, chainId, paymaster,
 * validUntil, validAfter)). `paymaster.test.ts` checks it against the contract.
 */
export function getSponsorshipHash(params: {
  userOperation: SponsoredOperation;
  chainId: number;
  paymaster: Address;
  window: SponsorshipWindow;
}): Hex {
  const op = params.userOperation;
  const initCode = getInitCode(op as UserOperation<'0.7'>);
  return keccak256(
    encodeAbiParameters(
      [
        { type: 'address' },
        { type: 'uint256' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'uint256' },
        { type: 'bytes32' },
        { type: 'uint256' },
        { type: 'address' },
        { type: 'uint48' },
        { type: 'uint48' },
      ],
      [
        op.sender,
        op.nonce,
        keccak256(initCode),
        keccak256(op.callData),
        packUints(op.verificationGasLimit, op.callGasLimit),
        hexToBigInt(packUints(op.paymasterVerificationGasLimit ?? 0n, op.paymasterPostOpGasLimit ?? 0n)),
        op.preVerificationGas,
        packUints(op.maxPriorityFeePerGas, op.maxFeePerGas),
        BigInt(params.chainId),
        params.paymaster,
        params.window.validUntil,
        params.window.validAfter,
      ],
    ),
  );
}

/**
 * The paymasterData of a sponsorship: abi.encode(uint48 validUntil, uint48 validAfter) ‖ the paymaster
 * signer's signature of the sponsorship hash as an Ethereum signed message (65 bytes).
 */
export async function signSponsorship(params: {
  userOperation: SponsoredOperation;
  chainId: number;
  paymaster: Address;
  window: SponsorshipWindow;
  signer: LocalAccount;
}): Promise<Hex> {
  const hash = getSponsorshipHash(params);
  const signature = await params.signer.signMessage({ message: { raw: hash } });
  return concat([encodeSponsorshipWindow(params.window), signature]);
}

export const encodeSponsorshipWindow = (w: SponsorshipWindow): Hex =>
  encodeAbiParameters([{ type: 'uint48' }, { type: 'uint48' }], [w.validUntil, w.validAfter]);

/**
 * The paymasterData of contracts/CompactVerifyingPaymaster.sol: validUntil ‖ validAfter as 6 big-endian bytes each,
 * then the signer's signature of the same sponsorship hash in EIP-2098's 64 bytes (r, yParity‖s): 76 bytes where
 * the VerifyingPaymaster's are 129, so 53 fewer bytes of calldata per operation (64 with the ABI's padding).
 */
export async function signCompactSponsorship(params: {
  userOperation: SponsoredOperation;
  chainId: number;
  paymaster: Address;
  window: SponsorshipWindow;
  signer: LocalAccount;
}): Promise<Hex> {
  const signature = await params.signer.signMessage({ message: { raw: getSponsorshipHash(params) } });
  return concat([encodeCompactSponsorshipWindow(params.window), serializeCompactSignature(signatureToCompactSignature(parseSignature(signature)))]);
}

export const encodeCompactSponsorshipWindow = (w: SponsorshipWindow): Hex =>
  concat([pad(numberToHex(w.validUntil), { size: 6 }), pad(numberToHex(w.validAfter), { size: 6 })]);

/** A well-formed 65-byte signature for size and gas estimates (ECDSA.recover must not revert on it). */
export const DUMMY_SIGNATURE: Hex =
  '0xfffffffffffffffffffffffffffffff0000000000000000000000000000000007aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1c';

/** Reads the window back from paymasterData; undefined when it is not a VerifyingPaymaster sponsorship. */
export function parseSponsorshipWindow(paymasterData: Hex | undefined): SponsorshipWindow | undefined {
  if (!paymasterData || size(paymasterData) < 64) return undefined;
  return {
    validUntil: Number(hexToBigInt(slice(paymasterData, 0, 32))),
    validAfter: Number(hexToBigInt(slice(paymasterData, 32, 64))),
  };
}
