import { parseAbi } from 'viem';
export { entryPoint07Abi } from 'viem/account-abstraction';

/**
 * The slices of the ERC-4337 v0.7 sample contracts this worker calls, written out so viem infers types.
 * `abi.test.ts` checks every selector and topic here against the @account-abstraction/contracts 0.7.0
 * artifacts, so a typo cannot go unnoticed.
 */

/** SimpleAccount v0.7: `executeBatch` takes a value array (empty = all zero). */
export const simpleAccountAbi = parseAbi([
  'function execute(address dest, uint256 value, bytes func)',
  'function executeBatch(address[] dest, uint256[] value, bytes[] func)',
  'function owner() view returns (address)',
]);

export const simpleAccountFactoryAbi = parseAbi([
  'function createAccount(address owner, uint256 salt) returns (address ret)',
  'function getAddress(address owner, uint256 salt) view returns (address)',
  'function accountImplementation() view returns (address)',
]);

export const verifyingPaymasterAbi = parseAbi([
  'struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }',
  'function getHash(PackedUserOperation userOp, uint48 validUntil, uint48 validAfter) view returns (bytes32)',
  'function verifyingSigner() view returns (address)',
  'function getDeposit() view returns (uint256)',
]);

export const erc20BalanceAbi = parseAbi(['function balanceOf(address owner) view returns (uint256)']);
