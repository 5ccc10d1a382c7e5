import { createHmac } from 'node:crypto';
import { bytesToHex, hexToBigInt, keccak256, numberToHex, toBytes, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';

/** Order of the secp256k1 group: a private key must lie in [1, n-1]. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const OWNER_KEY_DOMAIN = 'agent-wallet/owner/v1:';
const MIN_SECRET_BYTES = 16;

/** The service secret as bytes: a string is taken as UTF-8 text (it is never parsed as hex). */
export function serviceSecretBytes(secret: Uint8Array | string): Uint8Array {
  const bytes = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new RangeError(`the service secret must be at least ${MIN_SECRET_BYTES} bytes`);
  }
  return bytes;
}

/**
 * The owner key of every wallet of one API client: HMAC-SHA256(serviceSecret, "agent-wallet/owner/v1:" +
 * apiClient), reduced into [1, n-1] as k = h mod (n-1) + 1. Derived on demand and never stored: losing the
 * service secret loses control of every wallet, and rotating it moves every client to new wallets.
 *
 * The reduction is biased by less than 2^-127 (n-1 is within 2^-128 of 2^256), which is immaterial for a key.
 *
 * @example
 * const key = deriveOwnerPrivateKey(secret, 'acme'); // 0x… 32 bytes, same every time
 */
export function deriveOwnerPrivateKey(serviceSecret: Uint8Array | string, apiClient: string): Hex {
  if (apiClient.length === 0) throw new RangeError('apiClient must not be empty');
  const mac = createHmac('sha256', serviceSecretBytes(serviceSecret)).update(OWNER_KEY_DOMAIN + apiClient, 'utf8').digest();
  const h = hexToBigInt(bytesToHex(mac));
  const k = (h % (SECP256K1_N - 1n)) + 1n;
  return numberToHex(k, { size: 32 });
}

/** The owner account (signer) of an API client's wallets. */
export function deriveOwnerAccount(serviceSecret: Uint8Array | string, apiClient: string): PrivateKeyAccount {
  return privateKeyToAccount(deriveOwnerPrivateKey(serviceSecret, apiClient));
}

/**
 * The SimpleAccountFactory salt of an agent's wallet: BigInt(keccak256(utf8(agentId))). One API client's
 * owner key with a different salt per agent gives every agent its own wallet address; the same agent id under
 * two API clients gives two wallets (different owners).
 */
export function walletSalt(agentId: string): bigint {
  if (agentId.length === 0) throw new RangeError('agentId must not be empty');
  return hexToBigInt(keccak256(toBytes(agentId)));
}
