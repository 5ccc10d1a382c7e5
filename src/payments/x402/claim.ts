import { getAddress, type Address, type Hex } from 'viem';
import type { PaymentRequirements } from '@x402/core/types';
import type { X402Payment } from './payment.ts';

/**
 * What makes an EIP-3009 authorization unique: the token contract spends each (from, nonce) once, and its
 * EIP-712 domain ties the signature to one chain and one token. Two PAYMENT-SIGNATUREs with the same identity
 * are the same payment, whatever else differs.
 */
export interface AuthorizationIdentity {
  chainId: number;
  asset: Address;
  from: Address;
  nonce: Hex;
}

/** The identity of a matched payment (the chain and asset of the requirement it answers). */
export function authorizationIdentity(payment: X402Payment, requirement: PaymentRequirements): AuthorizationIdentity {
  const chainId = Number(requirement.network.split(':')[1]);
  if (!requirement.network.startsWith('eip155:') || !Number.isSafeInteger(chainId)) {
    throw new Error(`not an EVM network: ${requirement.network}`);
  }
  return {
    chainId,
    asset: getAddress(requirement.asset),
    from: getAddress(payment.authorization.from),
    nonce: payment.authorization.nonce.toLowerCase() as Hex,
  };
}

/**
 * The name of the resource that claims an authorization before it is settled (a PaymentReceipt created if
 * absent: the second create of the same name fails, so one authorization is settled for one request only).
 * The token's `authorizationState` is the second lock. Lower case, `-` separated, 150–160 characters: a valid
 * RFC 1123 object name.
 */
export function authorizationClaimName(id: AuthorizationIdentity): string {
  const hex = (value: string): string => value.toLowerCase().slice(2);
  return `x402-${id.chainId}-${hex(id.asset)}-${hex(id.from)}-${hex(id.nonce)}`;
}
