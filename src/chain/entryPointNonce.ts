import { concatHex, encodeAbiParameters, hexToBigInt, toFunctionSelector, type Address, type Hex } from 'viem';
import { entryPoint07Abi } from './abi.ts';
import type { ChainClient } from './client.ts';

const GET_NONCE = entryPoint07Abi.find((x) => x.type === 'function' && x.name === 'getNonce')!;
/** Computed once: viem's readContract looks the function up in the whole EntryPoint ABI and hashes its signature on every call. */
const GET_NONCE_SELECTOR = toFunctionSelector(GET_NONCE);

/**
 * `EntryPoint.getNonce(sender, key)`: the next nonce the EntryPoint accepts from the sender (key 0: sequential
 * nonces). Read on every prepare and by the bundler, hence by hand rather than through readContract.
 */
export async function readEntryPointNonce(client: ChainClient, entryPoint: Address, sender: Address, key = 0n): Promise<bigint> {
  const data = concatHex([GET_NONCE_SELECTOR, encodeAbiParameters(GET_NONCE.inputs, [sender, key])]);
  const result = (await client.request({ method: 'eth_call', params: [{ to: entryPoint, data }, 'latest'] })) as Hex;
  // A uint256 is one word; anything else (no code at the address answers "0x") is not an EntryPoint.
  if (result.length !== 66) throw new Error(`getNonce of ${entryPoint} answered ${result.slice(0, 80)}: is it an EntryPoint?`);
  return hexToBigInt(result);
}
