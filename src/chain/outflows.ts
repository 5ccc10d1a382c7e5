import { getAddress, isAddressEqual, type Address, type Hex } from 'viem';

/**
 * What leaves a wallet in a simulated execution: one entry per token transfer out of it (ERC-20, ERC-721,
 * ERC-1155, also one a protocol makes with transferFrom) and per native value it sends. Built from the logs
 * of the execution (see simulateOutflows.ts for where they come from); this module only reads logs.
 */
export type OutflowKind = 'native' | 'erc20' | 'erc721' | 'erc1155';
export interface Outflow {
  kind: OutflowKind;
  /** The token contract; absent for the native coin. */
  token?: Address;
  to: Address;
  /** Wei, token base units, 1 for an ERC-721 token. */
  amount: bigint;
  /** ERC-721 and ERC-1155 only. */
  tokenId?: bigint;
  /** The call of the batch that made it, when that is known (see simulateOutflows.ts). */
  callIndex?: number;
}

/** Why a simulation that was asked for its outflows has none to give (`outflows` is then absent, never `[]`). */
export interface OutflowsUnavailable {
  /** rpc_unsupported: the chain's RPC endpoint lacks a method the outflows need (eth_simulateV1, debug_traceCall). */
  code: 'rpc_unsupported';
  message: string;
}

export interface LogLike {
  address: Address;
  topics: readonly Hex[];
  data: Hex;
}

/** Transfer(address indexed from, address indexed to, uint256 value|tokenId): ERC-20 (3 topics), ERC-721 (4). */
export const TRANSFER_TOPIC: Hex = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
/** TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value). */
export const TRANSFER_SINGLE_TOPIC: Hex = '0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62';
/** TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values). */
export const TRANSFER_BATCH_TOPIC: Hex = '0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb';

/**
 * The emitters of synthetic native-value Transfer logs: geth's eth_simulateV1 `traceTransfers` (and anvil's,
 * reth's) use 0xeeee…; EIP-7708 puts them at 0xffff…fffe. No contract lives at either.
 */
export const NATIVE_TRANSFER_EMITTERS: readonly Address[] = [
  '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE',
  '0xfffffffffffffffffffffffffffffffffffffffe',
];
export const isNativeEmitter = (a: Address): boolean => NATIVE_TRANSFER_EMITTERS.some((e) => isAddressEqual(e, a));

const topicAddress = (t: Hex): Address => getAddress(`0x${t.slice(-40)}`);
const WORD = 64;
const wordAt = (data: Hex, i: number): bigint => BigInt(`0x${data.slice(2 + i * WORD, 2 + (i + 1) * WORD) || '0'}`);

/**
 * The outflows of `wallet` in `logs`, in log order: every transfer whose `from` is the wallet and whose `to` is
 * not (a transfer to itself moves nothing out). A log that does not decode as its topic says (a short data
 * field, an odd topic count) is skipped: any contract can emit a Transfer topic, and only well-formed ones are
 * transfers a token standard defines.
 *
 * @example
 * outflowsFromLogs(wallet, receipt.logs) // [{ kind: 'erc20', token: usdc, to: pool, amount: 5_000_000n }]
 */
export function outflowsFromLogs(wallet: Address, logs: readonly LogLike[], callIndex?: number): Outflow[] {
  const out: Outflow[] = [];
  const at = callIndex === undefined ? {} : { callIndex };
  const mine = (t: Hex | undefined) => t !== undefined && t.length === 66 && isAddressEqual(topicAddress(t), wallet);
  for (const log of logs) {
    const [topic0, t1, t2, t3] = log.topics;
    const words = (log.data.length - 2) / WORD;
    if (topic0 === TRANSFER_TOPIC && mine(t1) && t2 !== undefined) {
      const to = topicAddress(t2);
      if (isAddressEqual(to, wallet)) continue;
      if (isNativeEmitter(log.address)) {
        if (log.topics.length === 3 && words === 1) out.push({ kind: 'native', to, amount: wordAt(log.data, 0), ...at });
      } else if (log.topics.length === 3 && words === 1) {
        out.push({ kind: 'erc20', token: getAddress(log.address), to, amount: wordAt(log.data, 0), ...at });
      } else if (log.topics.length === 4 && words === 0) {
        out.push({ kind: 'erc721', token: getAddress(log.address), to, amount: 1n, tokenId: BigInt(t3!), ...at });
      }
    } else if ((topic0 === TRANSFER_SINGLE_TOPIC || topic0 === TRANSFER_BATCH_TOPIC) && log.topics.length === 4 && mine(t2)) {
      const to = topicAddress(t3!);
      if (isAddressEqual(to, wallet)) continue;
      const token = getAddress(log.address);
      for (const [tokenId, amount] of topic0 === TRANSFER_SINGLE_TOPIC ? single(log.data) : batch(log.data)) {
        out.push({ kind: 'erc1155', token, to, amount, tokenId, ...at });
      }
    }
  }
  return out;
}

function single(data: Hex): [bigint, bigint][] {
  return (data.length - 2) / WORD === 2 ? [[wordAt(data, 0), wordAt(data, 1)]] : [];
}

/** abi.encode(uint256[] ids, uint256[] values): two offsets, then each array as length + words. */
function batch(data: Hex): [bigint, bigint][] {
  const words = (data.length - 2) / WORD;
  if (!Number.isInteger(words) || words < 4) return [];
  const array = (offsetWord: number): bigint[] | undefined => {
    const start = Number(wordAt(data, offsetWord)) / 32;
    if (!Number.isInteger(start) || start >= words) return undefined;
    const n = Number(wordAt(data, start));
    if (start + 1 + n > words) return undefined;
    return Array.from({ length: n }, (_, i) => wordAt(data, start + 1 + i));
  };
  const ids = array(0);
  const values = array(1);
  if (!ids || !values || ids.length !== values.length) return [];
  return ids.map((id, i) => [id, values[i]!]);
}

/** The native coin the wallet sends in `outflows` and the native coin `logs` show it receiving. */
export function nativeNet(wallet: Address, logs: readonly LogLike[], outflows: readonly Outflow[]): { sent: bigint; received: bigint } {
  const sent = outflows.filter((o) => o.kind === 'native').reduce((s, o) => s + o.amount, 0n);
  let received = 0n;
  for (const log of logs) {
    const [topic0, t1, t2] = log.topics;
    if (topic0 !== TRANSFER_TOPIC || !isNativeEmitter(log.address) || t1 === undefined || t2 === undefined || log.topics.length !== 3) continue;
    if (isAddressEqual(topicAddress(t2), wallet) && !isAddressEqual(topicAddress(t1), wallet)) received += wordAt(log.data, 0);
  }
  return { sent, received };
}
