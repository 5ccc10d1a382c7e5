import {
  encodeFunctionData,
  hashMessage,
  isAddressEqual,
  isErc6492Signature,
  parseAbi,
  parseErc6492Signature,
  recoverMessageAddress,
  type Address,
  type Hex,
} from 'viem';
import type { ChainWorker } from '../chain/types.ts';

/**
 * A payer's signature over a payment proof: the optional, stronger binding of a transfer to a request. Anyone
 * who sees a transfer on chain knows its payer, hash and amount, but only the payer can sign for it, so a signed
 * proof cannot be taken by someone else; and it is how a transfer made before the quote (or after its window)
 * pays, since then its amount binds nothing.
 */

/** What the payer signs (EIP-191 personal_sign), built from the proof and the request, as docs/payments.md shows. */
export interface ProofMessageFields {
  /** The payload chain name (`base`): with the transaction hash, it names the transfer. */
  chain: string;
  txHash: string;
  /** The API client the proof is for (the id in its key `aw_<id>_<secret>`): no other key can use the signature. */
  client: string;
  /** The request the proof names (`request_id`), when it names one. */
  requestId?: string | undefined;
  /** Otherwise the agent the call is for: the proof pays the request this call makes, or finds, for it. */
  agentId?: string | undefined;
}

export function proofMessage(f: ProofMessageFields): string {
  if (f.requestId === undefined && f.agentId === undefined) throw new TypeError('a proof message names the request or the agent');
  return [
    'agent-wallet payment proof',
    `chain: ${f.chain}`,
    `transaction: ${f.txHash.toLowerCase()}`,
    `client: ${f.client}`,
    f.requestId !== undefined ? `request: ${f.requestId}` : `agent: ${f.agentId}`,
  ].join('\n');
}

const erc1271Abi = parseAbi(['function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)']);
const ERC1271_MAGIC = '0x1626ba7e';

/**
 * Whether `signature` is `payer`'s over `message`: an account's EIP-191 signature (recovered here), or a contract
 * wallet's ERC-1271 answer to `isValidSignature(hashMessage(message), signature)`, read through the chain worker.
 * An ERC-6492 signature is unwrapped to the signature inside: the payer made the transfer, so its wallet is
 * deployed by now, and what it answers today is what counts.
 */
export async function isPayerSignature(worker: Pick<ChainWorker, 'read'>, payer: Address, message: string, signature: Hex): Promise<boolean> {
  let inner: Hex;
  try {
    inner = isErc6492Signature(signature) ? parseErc6492Signature(signature).signature : signature;
  } catch {
    return false; // an ERC-6492 suffix around something that does not decode: no signature at all
  }
  if (inner.length === 132) {
    const signer = await recoverMessageAddress({ message, signature: inner }).catch(() => undefined);
    if (signer !== undefined && isAddressEqual(signer, payer)) return true;
  }
  let data: Hex;
  try {
    data = encodeFunctionData({ abi: erc1271Abi, functionName: 'isValidSignature', args: [hashMessage(message), inner] });
  } catch {
    return false;
  }
  const { results } = await worker.read([{ to: payer, data }]);
  const r = results[0];
  // An account (no code) answers an empty success; a wallet that refuses reverts or answers another value.
  return r?.success === true && r.returnData.slice(0, 10).toLowerCase() === ERC1271_MAGIC;
}
