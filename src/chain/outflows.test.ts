import { describe, expect, it } from 'vitest';
import { encodeAbiParameters, getAddress, MethodNotFoundRpcError, numberToHex, pad, type Address, type Hex } from 'viem';
import { nativeNet, outflowsFromLogs, TRANSFER_BATCH_TOPIC, TRANSFER_SINGLE_TOPIC, TRANSFER_TOPIC, type LogLike } from './outflows.ts';
import { isUnsupportedMethod, outflowsFromTrace, type CallFrame } from './simulateOutflows.ts';

const wallet: Address = getAddress('0x491bd1d9fcc19296a70ca3faff57c08ba61b4b4f');
const other: Address = '0x3333333333333333333333333333333333333333';
const token: Address = getAddress('0x4ed7c70f96b99c776995fb64377f0d4ab3b0e1c1');
const nft: Address = getAddress('0x5fbdb2315678afecb367f032d93f642f64180aa3');
const word = (x: bigint): Hex => numberToHex(x, { size: 32 });
const t = (a: Address): Hex => pad(a.toLowerCase() as Hex);

const erc20 = (from: Address, to: Address, amount: bigint, address = token): LogLike => ({ address, topics: [TRANSFER_TOPIC, t(from), t(to)], data: word(amount) });
const erc721 = (from: Address, to: Address, id: bigint): LogLike => ({ address: nft, topics: [TRANSFER_TOPIC, t(from), t(to), word(id)], data: '0x' });
const native = (emitter: Address, from: Address, to: Address, amount: bigint): LogLike => erc20(from, to, amount, emitter);
const single = (from: Address, to: Address, id: bigint, amount: bigint): LogLike => ({
  address: nft,
  topics: [TRANSFER_SINGLE_TOPIC, t(other), t(from), t(to)],
  data: encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], [id, amount]),
});
const batch = (from: Address, to: Address, ids: bigint[], amounts: bigint[]): LogLike => ({
  address: nft,
  topics: [TRANSFER_BATCH_TOPIC, t(other), t(from), t(to)],
  data: encodeAbiParameters([{ type: 'uint256[]' }, { type: 'uint256[]' }], [ids, amounts]),
});

describe('outflowsFromLogs', () => {
  it('reads an ERC-20 transfer out of the wallet (also one a protocol pulls), not one into it', () => {
    expect(outflowsFromLogs(wallet, [erc20(wallet, other, 77n), erc20(other, wallet, 5n)])).toEqual([{ kind: 'erc20', token, to: other, amount: 77n }]);
  });

  it('tells ERC-721 from ERC-20 by the topic count: the token id is the fourth topic, the data empty', () => {
    expect(outflowsFromLogs(wallet, [erc721(wallet, other, 42n)])).toEqual([{ kind: 'erc721', token: nft, to: other, amount: 1n, tokenId: 42n }]);
  });

  it('reads native value from both synthetic emitters (eth_simulateV1 traceTransfers, EIP-7708)', () => {
    const logs = [native('0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee', wallet, other, 123n), native('0xfffffffffffffffffffffffffffffffffffffffe', wallet, other, 9n)];
    expect(outflowsFromLogs(wallet, logs, 0)).toEqual([
      { kind: 'native', to: other, amount: 123n, callIndex: 0 },
      { kind: 'native', to: other, amount: 9n, callIndex: 0 },
    ]);
  });

  it('reads ERC-1155 TransferSingle and every pair of a TransferBatch, with `from` in the second topic', () => {
    const logs = [single(wallet, other, 7n, 3n), batch(wallet, other, [1n, 2n], [10n, 20n]), single(other, wallet, 7n, 1n)];
    expect(outflowsFromLogs(wallet, logs)).toEqual([
      { kind: 'erc1155', token: nft, to: other, amount: 3n, tokenId: 7n },
      { kind: 'erc1155', token: nft, to: other, amount: 10n, tokenId: 1n },
      { kind: 'erc1155', token: nft, to: other, amount: 20n, tokenId: 2n },
    ]);
  });

  it('skips a transfer from the wallet to itself: nothing leaves', () => {
    const logs = [erc20(wallet, wallet, 5n), native('0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee', wallet, wallet, 1n), single(wallet, wallet, 1n, 1n), erc721(wallet, wallet, 1n)];
    expect(outflowsFromLogs(wallet, logs)).toEqual([]);
  });

  it('skips logs that only look like transfers: malformed data, a TransferBatch with arrays of unequal length', () => {
    const short: LogLike = { ...erc20(wallet, other, 1n), data: '0x01' };
    const uneven: LogLike = { ...batch(wallet, other, [1n], [1n]), data: encodeAbiParameters([{ type: 'uint256[]' }, { type: 'uint256[]' }], [[1n, 2n], [1n]]) };
    const noTo: LogLike = { address: token, topics: [TRANSFER_TOPIC, t(wallet)], data: word(1n) };
    expect(outflowsFromLogs(wallet, [short, uneven, noTo])).toEqual([]);
  });

  it('nativeNet: what the logs say the wallet sent and received in native coin', () => {
    const e: Address = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
    const logs = [native(e, wallet, other, 10n), native(e, other, wallet, 4n), erc20(other, wallet, 100n)];
    expect(nativeNet(wallet, logs, outflowsFromLogs(wallet, logs))).toEqual({ sent: 10n, received: 4n });
  });
});

describe('outflowsFromTrace (callTracer withLog)', () => {
  const proxyTop = (calls: CallFrame[]): CallFrame => ({
    type: 'CALL',
    from: '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
    to: wallet,
    calls: [{ type: 'DELEGATECALL', from: wallet, to: '0x1111111111111111111111111111111111111111', calls }],
  });

  it('skips a reverted frame and all under it, keeps value and logs of the others in order, attributes each batch call', () => {
    const trace = proxyTop([
      { type: 'CALL', from: wallet, to: other, value: '0x5' },
      {
        type: 'CALL',
        from: wallet,
        to: token,
        value: '0x0',
        logs: [{ ...erc20(wallet, other, 8n), position: '0x0' }],
      },
      { type: 'CALL', from: wallet, to: nft, value: '0x7', error: 'execution reverted', calls: [{ type: 'CALL', from: nft, to: other, value: '0x7' }] },
    ]);
    expect(outflowsFromTrace(wallet, trace, 3)).toEqual([
      { kind: 'native', to: other, amount: 5n, callIndex: 0 },
      { kind: 'erc20', token, to: other, amount: 8n, callIndex: 1 },
    ]);
  });

  it('counts a protocol pulling the wallet tokens in a nested frame, and ignores DELEGATECALL value', () => {
    const pool: Address = '0x2222222222222222222222222222222222222222';
    const trace = proxyTop([
      {
        type: 'CALL',
        from: wallet,
        to: pool,
        calls: [
          { type: 'DELEGATECALL', from: pool, to: other, value: '0x9' },
          { type: 'CALL', from: pool, to: token, logs: [{ ...erc20(wallet, pool, 50n), position: 0 }] },
        ],
      },
    ]);
    expect(outflowsFromTrace(wallet, trace, 1)).toEqual([{ kind: 'erc20', token, to: pool, amount: 50n, callIndex: 0 }]);
  });
});

describe('isUnsupportedMethod', () => {
  it('is true for -32601 and for "method not supported" messages, false for other RPC errors', () => {
    expect(isUnsupportedMethod(new MethodNotFoundRpcError(new Error('the method eth_simulateV1 does not exist/is not available')))).toBe(true);
    expect(isUnsupportedMethod({ code: -32601, message: 'Method not found' })).toBe(true);
    expect(isUnsupportedMethod({ code: -32000, message: 'method debug_traceCall is not available on this endpoint' })).toBe(true);
    expect(isUnsupportedMethod({ code: -32000, message: 'header not found' })).toBe(false);
    expect(isUnsupportedMethod(new Error('fetch failed'))).toBe(false);
  });
});
