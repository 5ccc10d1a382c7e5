import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { SignedUserOperation } from '../../api/v1alpha1/index.ts';
import { AgentWalletError } from '../../lib/errors.ts';
import { err, ok } from '../../lib/result.ts';
import { ChainError, isChainError, type ChainErrorCode } from '../errors.ts';
import type { OperationOutcome, ReadResult, SimulationFailure, SimulationResult, TransactionReceiptInfo } from '../types.ts';
import {
  decodeHead,
  decodeOperation,
  decodeOutcome,
  decodeReadRequest,
  decodeReadResult,
  decodeReceipt,
  decodeSimulation,
  decodeWalletBalances,
  encodeHead,
  encodeOperation,
  encodeOutcome,
  encodeReadRequest,
  encodeReadResult,
  encodeReceipt,
  encodeSimulation,
  encodeWalletBalances,
  WireFormatError,
} from './codec.ts';
import { ChainWorkerRemoteError, fromGrpcStatus, isRetryableTransportFailure, toGrpcStatus } from './errors.ts';
import * as pb from './generated/chainworker/v1/chainworker.ts';

/** Through real protobuf bytes, as it crosses the wire. */
const viaWire = <T>(fns: { encode(m: T): { finish(): Uint8Array }; decode(b: Uint8Array): T }, m: T): T => fns.decode(fns.encode(m).finish());

const op: SignedUserOperation = {
  sender: '0x1111111111111111111111111111111111111111',
  nonce: '0',
  factory: '0x2222222222222222222222222222222222222222',
  factoryData: '0xabcdef',
  callData: '0xb61d27f6',
  callGasLimit: '50000',
  verificationGasLimit: '350000',
  preVerificationGas: '48000',
  maxFeePerGas: '2000000002',
  maxPriorityFeePerGas: '1',
  paymaster: '0x3333333333333333333333333333333333333333',
  paymasterVerificationGasLimit: '45000',
  paymasterPostOpGasLimit: '1',
  paymasterData: '0x00',
  signature: `0x${'ab'.repeat(65)}`,
  hash: `0x${'cd'.repeat(32)}`,
  entryPoint: '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
  chainId: 421614,
};

describe('chain worker wire codec', () => {
  it('carries an operation unchanged, with and without its optional fields', () => {
    expect(decodeOperation(viaWire(pb.SignedUserOperation, encodeOperation(op)))).toStrictEqual(op);
    const { factory: _f, factoryData: _d, paymaster: _p, paymasterData: _pd, paymasterVerificationGasLimit: _a, paymasterPostOpGasLimit: _b, ...bare } = op;
    const back = decodeOperation(viaWire(pb.SignedUserOperation, encodeOperation(bare)));
    expect(back).toStrictEqual(bare);
    expect('factory' in back).toBe(false);
  });

  it('refuses a malformed operation and a chain id beyond 2^53', () => {
    expect(() => decodeOperation({ ...encodeOperation(op), nonce: '-1' })).toThrow(WireFormatError);
    expect(() => decodeOperation(undefined)).toThrow(/malformed operation/);
    // chain_id = 2^60 (field 18, varint) appended to an otherwise valid message: the decoder must refuse it.
    const writer = pb.SignedUserOperation.encode({ ...encodeOperation(op), chainId: 0 });
    writer.uint32((18 << 3) | 0).uint64(2n ** 60n);
    expect(() => pb.SignedUserOperation.decode(writer.finish())).toThrow(/MAX_SAFE_INTEGER/);
  });

  it('carries a simulation result (bigints as decimal strings) and every failure code with its details', () => {
    const result: SimulationResult = {
      wallet: { address: '0x1111111111111111111111111111111111111111', deployed: false },
      estimatedGas: 2n ** 70n,
      callGas: 26_000n,
      maxFeePerGas: 2_000_000_002n,
      estimatedCostWei: 2n ** 70n * 2_000_000_002n,
      estimatedCostUsd: 0.001234,
    };
    expect(decodeSimulation(viaWire(pb.SimulateResponse, encodeSimulation(ok(result))))).toStrictEqual(ok(result));
    const failures: SimulationFailure[] = [
      { code: 'simulation_reverted', message: 'Counter: forced failure', callIndex: 0, revertReason: 'Counter: forced failure', revertData: '0x08c379a0' },
      { code: 'insufficient_funds', message: 'value beyond balance' },
      { code: 'rpc_unavailable', message: 'the chain did not answer' },
    ];
    for (const f of failures) expect(decodeSimulation(viaWire(pb.SimulateResponse, encodeSimulation(err(f))))).toStrictEqual(err(f));
  });

  it('carries outflows of every kind, "asked, none" apart from "not asked", and why they are unavailable', () => {
    const base: SimulationResult = {
      wallet: { address: '0x1111111111111111111111111111111111111111', deployed: true },
      estimatedGas: 100_000n,
      callGas: 26_000n,
      maxFeePerGas: 1n,
      estimatedCostWei: 100_000n,
      estimatedCostUsd: 0,
    };
    const token = '0x2222222222222222222222222222222222222222';
    const to = '0x3333333333333333333333333333333333333333';
    const withOutflows: SimulationResult = {
      ...base,
      outflows: [
        { kind: 'native', to, amount: 2n ** 200n, callIndex: 0 },
        { kind: 'erc20', token, to, amount: 5n },
        { kind: 'erc721', token, to, amount: 1n, tokenId: 2n ** 255n, callIndex: 3 },
        { kind: 'erc1155', token, to, amount: 7n, tokenId: 0n },
      ],
    };
    const roundTrip = (r: SimulationResult) => decodeSimulation(viaWire(pb.SimulateResponse, encodeSimulation(ok(r))));
    expect(roundTrip(withOutflows)).toStrictEqual(ok(withOutflows));
    expect(roundTrip({ ...base, outflows: [] })).toStrictEqual(ok({ ...base, outflows: [] }));
    expect(roundTrip(base)).toStrictEqual(ok(base));
    const unavailable: SimulationResult = { ...base, outflowsUnavailable: { code: 'rpc_unsupported', message: 'no eth_simulateV1' } };
    expect(roundTrip(unavailable)).toStrictEqual(ok(unavailable));

    // A native outflow with a token, a token outflow without one, an unknown kind: refused.
    const wire = (o: Partial<pb.Outflow>) => ({
      result: { $case: 'success' as const, value: { ...encodeSimulation(ok(base)).result!.value as pb.SimulationResult, outflows: { items: [{ kind: pb.OutflowKind.OUTFLOW_KIND_ERC20, to, amount: '1', ...o }] } } },
    });
    expect(() => decodeSimulation(viaWire(pb.SimulateResponse, wire({ kind: pb.OutflowKind.OUTFLOW_KIND_NATIVE, token })))).toThrow(WireFormatError);
    expect(() => decodeSimulation(viaWire(pb.SimulateResponse, wire({})))).toThrow(WireFormatError);
    expect(() => decodeSimulation(viaWire(pb.SimulateResponse, wire({ kind: pb.OutflowKind.OUTFLOW_KIND_UNSPECIFIED })))).toThrow(/unknown outflow kind/);
  });

  it('refuses a failure without a known code and a response with neither result', () => {
    const unspecified = { result: { $case: 'failure' as const, value: { code: pb.SimulationFailureCode.SIMULATION_FAILURE_CODE_UNSPECIFIED, message: 'x' } } };
    expect(() => decodeSimulation(viaWire(pb.SimulateResponse, unspecified))).toThrow(/unknown simulation failure code/);
    expect(() => decodeSimulation({})).toThrow(WireFormatError);
  });

  it('carries every outcome state', () => {
    const outcomes: OperationOutcome[] = [
      { state: 'pending' },
      { state: 'unknown' },
      { state: 'dropped', code: 'validation_failed', message: 'AA24 signature error' },
      {
        state: 'included',
        success: true,
        txHash: `0x${'12'.repeat(32)}`,
        blockNumber: '42',
        blockHash: `0x${'ab'.repeat(32)}`,
        confirmations: 2,
        requiredConfirmations: 3,
        actualGasUsed: '105000',
        actualGasCostWei: '210000000000',
      },
      {
        state: 'included',
        success: false,
        blockHash: `0x${'cd'.repeat(32)}`,
        confirmations: 1,
        requiredConfirmations: 1,
        txHash: `0x${'12'.repeat(32)}`,
        blockNumber: '43',
        actualGasUsed: '90000',
        actualGasCostWei: '1',
        revertReason: 'Gate: closed',
        revertData: '0x08c379a0',
      },
    ];
    for (const o of outcomes) expect(decodeOutcome(viaWire(pb.OperationOutcome, encodeOutcome(o)))).toStrictEqual(o);
    expect(() => decodeOutcome({})).toThrow(/no state/);
  });

  it('carries balances', () => {
    const b = {
      address: '0x1111111111111111111111111111111111111111' as const,
      deployed: true,
      nativeWei: '12345',
      tokens: [{ symbol: 'USDC', address: '0x2222222222222222222222222222222222222222' as const, decimals: 6, raw: '0' }],
    };
    expect(decodeWalletBalances(viaWire(pb.WalletBalances, encodeWalletBalances(b)))).toStrictEqual(b);
  });
});

describe('chain worker wire codec: reads', () => {
  const hash = `0x${'cd'.repeat(32)}` as const;

  it('carries the head and a read (request and per-call results) unchanged', () => {
    const head = { blockNumber: 2n ** 60n, blockHash: hash, timestamp: 1_800_000_000n };
    expect(decodeHead(viaWire(pb.GetHeadResponse, encodeHead(head)))).toStrictEqual(head);

    const calls = [{ to: op.sender as `0x${string}`, data: '0x70a08231' as const }];
    expect(decodeReadRequest(viaWire(pb.ReadRequest, encodeReadRequest(calls, 12n)))).toStrictEqual({ calls, block: 12n });
    expect(decodeReadRequest(viaWire(pb.ReadRequest, encodeReadRequest(calls, 'latest')))).toStrictEqual({ calls, block: 'latest' });
    expect(decodeReadRequest(viaWire(pb.ReadRequest, encodeReadRequest(calls, undefined)))).toStrictEqual({ calls, block: 'latest' });
    // Block 0 is a block, not "absent".
    expect(decodeReadRequest(viaWire(pb.ReadRequest, encodeReadRequest(calls, 0n))).block).toBe(0n);

    const result: ReadResult = {
      blockNumber: 12n,
      results: [
        { success: true, returnData: '0x' },
        { success: false, revertData: '0x08c379a0', reason: 'Counter: forced failure' },
        { success: true, returnData: `0x${'00'.repeat(31)}2a` },
      ],
    };
    expect(decodeReadResult(viaWire(pb.ReadResponse, encodeReadResult(result)))).toStrictEqual(result);
  });

  it('carries a receipt, with and without `to`, and not found', () => {
    const receipt: TransactionReceiptInfo = {
      transactionHash: hash,
      status: 'reverted',
      blockNumber: 7n,
      blockHash: hash,
      blockTimestamp: 1_767_225_600n,
      from: '0x1111111111111111111111111111111111111111',
      to: '0x2222222222222222222222222222222222222222',
      logs: [{ address: '0x3333333333333333333333333333333333333333', topics: [hash, hash], data: '0x01', logIndex: 3 }],
      confirmations: 1n,
    };
    expect(decodeReceipt(viaWire(pb.GetTransactionReceiptResponse, encodeReceipt(receipt)))).toStrictEqual(receipt);
    const { to: _to, ...creation } = receipt;
    const back = decodeReceipt(viaWire(pb.GetTransactionReceiptResponse, encodeReceipt({ ...creation, status: 'success' })));
    expect(back).toStrictEqual({ ...creation, status: 'success' });
    expect(decodeReceipt(viaWire(pb.GetTransactionReceiptResponse, encodeReceipt(undefined)))).toBeUndefined();
  });

  it('refuses malformed reads and receipts', () => {
    expect(() => decodeHead({ blockNumber: '1', blockHash: '', timestamp: '1' })).toThrow(WireFormatError);
    expect(() => decodeReadRequest({ calls: [{ to: '0x12', data: '0x' }] })).toThrow(/malformed read/);
    expect(() => decodeReadRequest({ calls: [], block: '-1' })).toThrow(WireFormatError);
    expect(() => decodeReadResult({ blockNumber: '1', results: [{}] })).toThrow(WireFormatError);
    expect(() => decodeReadResult({ blockNumber: '1', results: [{ result: { $case: 'success', value: { returnData: 'zz' } } }] })).toThrow(WireFormatError);
    expect(() => decodeReceipt({})).toThrow(/neither receipt nor not_found/);
  });
});

describe('chain worker errors over gRPC', () => {
  /** What the client receives for a status the server answered (trailers go through real Metadata). */
  const asReceived = (s: ReturnType<typeof toGrpcStatus>): ServiceError =>
    Object.assign(new Error(`${s.code} ${status[s.code]}: ${s.details}`), { code: s.code, details: s.details, metadata: s.metadata.clone() });
  const at = { chain: 'arbitrum', address: '127.0.0.1:1', method: 'prepareOperation' };

  it('rebuilds every ChainError with its code and details, so isChainError branches keep working', () => {
    const codes: ChainErrorCode[] = [
      'rpc_unavailable',
      'simulation_reverted',
      'insufficient_funds',
      'invalid_operation',
      'nonce_conflict',
      'closed',
      'not_restored',
      'invalid_request',
    ];
    for (const code of codes) {
      const thrown = new ChainError(code, `message of ${code} — ünïcode`, { details: { requestId: 'r-1', revertReason: 'Gate: closed', gas: 5n } });
      const s = toGrpcStatus(thrown);
      const back = fromGrpcStatus(asReceived(s), at);
      expect(isChainError(back, code), code).toBe(true);
      expect((back as ChainError).shortMessage).toBe(thrown.shortMessage);
      expect((back as ChainError).details).toEqual({ requestId: 'r-1', revertReason: 'Gate: closed', gas: '5' });
      // An answer of the worker is never retried by the client, whatever its gRPC code.
      expect(isRetryableTransportFailure(asReceived(s))).toBe(false);
    }
    expect(toGrpcStatus(new ChainError('rpc_unavailable', 'x')).code).toBe(status.UNAVAILABLE);
    expect(toGrpcStatus(new ChainError('simulation_reverted', 'x')).code).toBe(status.FAILED_PRECONDITION);
    expect(toGrpcStatus(new ChainError('nonce_conflict', 'x')).code).toBe(status.ABORTED);
  });

  it('keeps the code of other errors of ours, and reports a bug as internal', () => {
    const lock = fromGrpcStatus(asReceived(toGrpcStatus(new AgentWalletError('Unavailable', 'redis is down'))), at);
    expect(lock).toBeInstanceOf(ChainWorkerRemoteError);
    expect(lock).toMatchObject({ code: 'Unavailable', shortMessage: 'redis is down' });
    const bug = toGrpcStatus(new TypeError('x is undefined'));
    expect(bug.code).toBe(status.INTERNAL);
    expect(fromGrpcStatus(asReceived(bug), at)).toMatchObject({ code: 'internal' });
    const bad = toGrpcStatus(new WireFormatError('invalid_message', 'malformed wallet'));
    expect(bad.code).toBe(status.INVALID_ARGUMENT);
    expect(fromGrpcStatus(asReceived(bad), at)).toMatchObject({ code: 'invalid_request' });
  });

  it('treats a worker that does not answer as rpc_unavailable (retryable transport failure)', () => {
    for (const code of [status.UNAVAILABLE, status.DEADLINE_EXCEEDED]) {
      const e = asReceived({ code, details: 'No connection established', metadata: new Metadata() });
      expect(isRetryableTransportFailure(e)).toBe(true);
      const back = fromGrpcStatus(e, at);
      expect(isChainError(back, 'rpc_unavailable')).toBe(true);
      expect((back as ChainError).shortMessage).toContain('arbitrum chain worker at 127.0.0.1:1 (prepareOperation) did not answer');
    }
    const unimplemented = fromGrpcStatus(asReceived({ code: status.UNIMPLEMENTED, details: 'no such method', metadata: new Metadata() }), at);
    expect(unimplemented).toMatchObject({ code: 'grpc_unimplemented', grpcCode: status.UNIMPLEMENTED });
  });
});
