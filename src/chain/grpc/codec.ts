import type { Address, Hex } from 'viem';
import { z } from 'zod';
import { CallSchema, SignedUserOperationSchema, type Call, type SignedUserOperation } from '../../api/v1alpha1/index.ts';
import { AgentWalletError } from '../../lib/errors.ts';
import { err, ok, type Result } from '../../lib/result.ts';
import type {
  Outflow,
  OutflowKind,
  ChainHead,
  OperationOutcome,
  ReadCall,
  ReadCallResult,
  ReadResult,
  SendFailure,
  SendFailureCode,
  SendPurpose,
  SendPurposeKind,
  SignedSend,
  AuthorizationRef,
  Eip3009Authorization,
  SimulationFailure,
  SimulationFailureCode,
  SimulationResult,
  TransactionReceiptInfo,
  LogQuery,
  LogsResult,
  GasFees,
  WalletBalances,
  WalletInfo,
  WalletRef,
} from '../types.ts';
import * as pb from './generated/chainworker/v1/chainworker.ts';

/**
 * Domain types (src/chain/types.ts) ↔ wire messages (proto/chainworker/v1). Encoding trusts the types;
 * decoding validates with zod, because what comes off the wire was built by another process (possibly of
 * another version): a malformed message fails here with `invalid_message` instead of somewhere downstream.
 */

/** A message that does not hold what its schema promises (missing field, bad hex, bad decimal). */
export class WireFormatError extends AgentWalletError<'invalid_message'> {
  override readonly name = 'WireFormatError';
}

const AddressSchema = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
const HexSchema = z.string().regex(/^0x([0-9a-fA-F]{2})*$/);
const HashSchema = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
const UintSchema = z.string().regex(/^(0|[1-9][0-9]*)$/);

function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => `${[what, ...i.path].join('.')}: ${i.message}`);
  throw new WireFormatError('invalid_message', `malformed ${what}: ${issues.join('; ')}`, { details: { issues } });
}

/** Drops keys whose value is undefined, so a decoded object equals the one that was encoded. */
function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

// ───────────────────────────── wallet refs and calls ─────────────────────────────

const WalletRefSchema = z.object({ apiClient: z.string().min(1), agentId: z.string().min(1) });

export const encodeWalletRef = (r: WalletRef): pb.WalletRef => ({ apiClient: r.apiClient, agentId: r.agentId });
export const decodeWalletRef = (m: pb.WalletRef | undefined): WalletRef => parse(WalletRefSchema, m, 'wallet');

export const encodeCalls = (calls: readonly Call[]): pb.Call[] => calls.map((c) => ({ target: c.target, value: c.value, data: c.data }));
export const decodeCalls = (m: readonly pb.Call[]): Call[] => parse(z.array(CallSchema).min(1), m, 'calls');

// ───────────────────────────── wallets ─────────────────────────────

const WalletInfoSchema = z.object({ address: AddressSchema, deployed: z.boolean() });
const WalletBalancesSchema = z.object({
  address: AddressSchema,
  deployed: z.boolean(),
  nativeWei: UintSchema,
  tokens: z.array(z.object({ symbol: z.string(), address: AddressSchema, decimals: z.number().int().min(0), raw: UintSchema })),
});

export const encodeWalletInfo = (w: WalletInfo): pb.WalletInfo => ({ address: w.address, deployed: w.deployed });
export const decodeWalletInfo = (m: pb.WalletInfo | undefined): WalletInfo => {
  const w = parse(WalletInfoSchema, m, 'wallet');
  return { address: w.address as Address, deployed: w.deployed };
};

export const encodeWalletBalances = (b: WalletBalances): pb.WalletBalances => ({
  address: b.address,
  deployed: b.deployed,
  nativeWei: b.nativeWei,
  tokens: b.tokens.map((t) => ({ symbol: t.symbol, address: t.address, decimals: t.decimals, raw: t.raw })),
});
export const decodeWalletBalances = (m: pb.WalletBalances | undefined): WalletBalances => {
  const b = parse(WalletBalancesSchema, m, 'balances');
  return {
    address: b.address as Address,
    deployed: b.deployed,
    nativeWei: b.nativeWei,
    tokens: b.tokens.map((t) => ({ symbol: t.symbol, address: t.address as Address, decimals: t.decimals, raw: t.raw })),
  };
};

// ───────────────────────────── simulation ─────────────────────────────

/** Every SimulationFailureCode has its enum value: the Record makes a new code a compile error here. */
const FAILURE_CODE_TO_WIRE: Readonly<Record<SimulationFailureCode, pb.SimulationFailureCode>> = {
  simulation_reverted: pb.SimulationFailureCode.SIMULATION_FAILURE_CODE_SIMULATION_REVERTED,
  insufficient_funds: pb.SimulationFailureCode.SIMULATION_FAILURE_CODE_INSUFFICIENT_FUNDS,
  rpc_unavailable: pb.SimulationFailureCode.SIMULATION_FAILURE_CODE_RPC_UNAVAILABLE,
};
const FAILURE_CODE_FROM_WIRE = new Map(Object.entries(FAILURE_CODE_TO_WIRE).map(([k, v]) => [v, k as SimulationFailureCode]));

const SimulationResultSchema = z.object({
  wallet: WalletInfoSchema,
  estimatedGas: UintSchema,
  callGas: UintSchema,
  maxFeePerGas: UintSchema,
  estimatedCostWei: UintSchema,
  estimatedCostUsd: z.number().finite().min(0),
  // (declared below with the reads: a function, so its schema is read when a simulation is decoded)
  observed: z.lazy(() => z.object({ before: z.array(ReadCallResultSchema), after: z.array(ReadCallResultSchema) })).optional(),
  outflows: z.object({ items: z.array(z.lazy(() => OutflowSchema)) }).optional(),
  outflowsUnavailable: z.object({ code: z.literal('rpc_unsupported'), message: z.string() }).optional(),
  l1Data: z.object({ gas: UintSchema, costWei: UintSchema }).optional(),
});

/** Every OutflowKind has its enum value: the Record makes a new kind a compile error here. */
const OUTFLOW_KIND_TO_WIRE: Readonly<Record<OutflowKind, pb.OutflowKind>> = {
  native: pb.OutflowKind.OUTFLOW_KIND_NATIVE,
  erc20: pb.OutflowKind.OUTFLOW_KIND_ERC20,
  erc721: pb.OutflowKind.OUTFLOW_KIND_ERC721,
  erc1155: pb.OutflowKind.OUTFLOW_KIND_ERC1155,
};
const OUTFLOW_KIND_FROM_WIRE = new Map(Object.entries(OUTFLOW_KIND_TO_WIRE).map(([k, v]) => [v, k as OutflowKind]));
const OutflowSchema = z
  .object({
    kind: z.enum(pb.OutflowKind).transform((k, ctx) => {
      const kind = OUTFLOW_KIND_FROM_WIRE.get(k);
      if (kind === undefined) {
        ctx.addIssue({ code: 'custom', message: `unknown outflow kind ${k}` });
        return z.NEVER;
      }
      return kind;
    }),
    token: AddressSchema.optional(),
    to: AddressSchema,
    amount: UintSchema,
    tokenId: UintSchema.optional(),
    callIndex: z.number().int().min(0).optional(),
  })
  // A native outflow has no token; every token outflow names its contract.
  .refine((o) => (o.kind === 'native') === (o.token === undefined), { message: 'token is absent exactly for a native outflow' });

const encodeOutflow = (o: Outflow): pb.Outflow => ({
  kind: OUTFLOW_KIND_TO_WIRE[o.kind],
  token: o.token,
  to: o.to,
  amount: o.amount.toString(),
  tokenId: o.tokenId?.toString(),
  callIndex: o.callIndex,
});
const decodeOutflow = (o: z.output<typeof OutflowSchema>): Outflow =>
  compact({
    kind: o.kind,
    token: o.token as Address | undefined,
    to: o.to as Address,
    amount: BigInt(o.amount),
    tokenId: o.tokenId === undefined ? undefined : BigInt(o.tokenId),
    callIndex: o.callIndex,
  });
const SimulationFailureSchema = z.object({
  code: z.enum(pb.SimulationFailureCode).transform((c, ctx) => {
    const code = FAILURE_CODE_FROM_WIRE.get(c);
    if (code === undefined) {
      ctx.addIssue({ code: 'custom', message: `unknown simulation failure code ${c}` });
      return z.NEVER;
    }
    return code;
  }),
  message: z.string(),
  callIndex: z.number().int().min(0).optional(),
  revertReason: z.string().optional(),
  revertData: HexSchema.optional(),
});

export function encodeSimulation(r: Result<SimulationResult, SimulationFailure>): pb.SimulateResponse {
  if (r.ok) {
    const s = r.value;
    return {
      result: {
        $case: 'success',
        value: {
          wallet: encodeWalletInfo(s.wallet),
          estimatedGas: s.estimatedGas.toString(),
          callGas: s.callGas.toString(),
          maxFeePerGas: s.maxFeePerGas.toString(),
          estimatedCostWei: s.estimatedCostWei.toString(),
          estimatedCostUsd: s.estimatedCostUsd,
          observed: s.observed && { before: s.observed.before.map(encodeReadCallResult), after: s.observed.after.map(encodeReadCallResult) },
          outflows: s.outflows && { items: s.outflows.map(encodeOutflow) },
          outflowsUnavailable: s.outflowsUnavailable,
          l1Data: s.l1Data && { gas: s.l1Data.gas.toString(), costWei: s.l1Data.costWei.toString() },
        },
      },
    };
  }
  const f = r.error;
  return {
    result: {
      $case: 'failure',
      value: { code: FAILURE_CODE_TO_WIRE[f.code], message: f.message, callIndex: f.callIndex, revertReason: f.revertReason, revertData: f.revertData },
    },
  };
}

export function decodeSimulation(m: pb.SimulateResponse): Result<SimulationResult, SimulationFailure> {
  switch (m.result?.$case) {
    case 'success': {
      const s = parse(SimulationResultSchema, m.result.value, 'simulation');
      return ok({
        wallet: { address: s.wallet.address as Address, deployed: s.wallet.deployed },
        estimatedGas: BigInt(s.estimatedGas),
        callGas: BigInt(s.callGas),
        maxFeePerGas: BigInt(s.maxFeePerGas),
        estimatedCostWei: BigInt(s.estimatedCostWei),
        estimatedCostUsd: s.estimatedCostUsd,
        ...(s.observed && { observed: { before: s.observed.before.map(decodeReadCallResult), after: s.observed.after.map(decodeReadCallResult) } }),
        ...(s.outflows && { outflows: s.outflows.items.map(decodeOutflow) }),
        ...(s.outflowsUnavailable && { outflowsUnavailable: s.outflowsUnavailable }),
        ...(s.l1Data && { l1Data: { gas: BigInt(s.l1Data.gas), costWei: BigInt(s.l1Data.costWei) } }),
      });
    }
    case 'failure': {
      const f = parse(SimulationFailureSchema, m.result.value, 'simulation failure');
      return err(compact({ ...f, revertData: f.revertData as Hex | undefined }));
    }
    case undefined:
      throw new WireFormatError('invalid_message', 'malformed simulation: neither success nor failure');
  }
}

// ───────────────────────────── operations ─────────────────────────────

export function encodeOperation(op: SignedUserOperation): pb.SignedUserOperation {
  return {
    sender: op.sender,
    nonce: op.nonce,
    factory: op.factory,
    factoryData: op.factoryData,
    callData: op.callData,
    callGasLimit: op.callGasLimit,
    verificationGasLimit: op.verificationGasLimit,
    preVerificationGas: op.preVerificationGas,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    paymaster: op.paymaster,
    paymasterVerificationGasLimit: op.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: op.paymasterPostOpGasLimit,
    paymasterData: op.paymasterData,
    signature: op.signature,
    hash: op.hash,
    entryPoint: op.entryPoint,
    chainId: op.chainId,
  };
}

export const decodeOperation = (m: pb.SignedUserOperation | undefined): SignedUserOperation =>
  compact(parse(SignedUserOperationSchema, m, 'operation'));

// ───────────────────────────── outcomes ─────────────────────────────

const IncludedSchema = z.object({
  success: z.boolean(),
  txHash: HashSchema,
  blockNumber: UintSchema,
  blockHash: HashSchema,
  confirmations: z.number().int().min(0),
  requiredConfirmations: z.number().int().min(1),
  actualGasUsed: UintSchema,
  actualGasCostWei: UintSchema,
  revertReason: z.string().optional(),
  revertData: HexSchema.optional(),
});
const DroppedSchema = z.object({ code: z.string().min(1), message: z.string() });

export function encodeOutcome(o: OperationOutcome): pb.OperationOutcome {
  switch (o.state) {
    case 'pending':
      return { state: { $case: 'pending', value: {} } };
    case 'unknown':
      return { state: { $case: 'unknown', value: {} } };
    case 'dropped':
      return { state: { $case: 'dropped', value: { code: o.code, message: o.message } } };
    case 'included':
      return {
        state: {
          $case: 'included',
          value: {
            success: o.success,
            txHash: o.txHash,
            blockNumber: o.blockNumber,
            blockHash: o.blockHash,
            confirmations: o.confirmations,
            requiredConfirmations: o.requiredConfirmations,
            actualGasUsed: o.actualGasUsed,
            actualGasCostWei: o.actualGasCostWei,
            revertReason: o.revertReason,
            revertData: o.revertData,
          },
        },
      };
  }
}

export function decodeOutcome(m: pb.OperationOutcome | undefined): OperationOutcome {
  switch (m?.state?.$case) {
    case 'pending':
      return { state: 'pending' };
    case 'unknown':
      return { state: 'unknown' };
    case 'dropped':
      return { state: 'dropped', ...parse(DroppedSchema, m.state.value, 'outcome') };
    case 'included': {
      const i = parse(IncludedSchema, m.state.value, 'outcome');
      return compact({ state: 'included' as const, ...i, txHash: i.txHash as Hex, blockHash: i.blockHash as Hex, revertData: i.revertData as Hex | undefined });
    }
    case undefined:
      throw new WireFormatError('invalid_message', 'malformed outcome: no state');
  }
}

export const decodeHash = (s: string): Hex => parse(HashSchema, s, 'opHash') as Hex;

// ───────────────────────────── reads ─────────────────────────────

const HeadSchema = z.object({ blockNumber: UintSchema, blockHash: HashSchema, timestamp: UintSchema });

export const encodeHead = (h: ChainHead): pb.GetHeadResponse => ({
  blockNumber: h.blockNumber.toString(),
  blockHash: h.blockHash,
  timestamp: h.timestamp.toString(),
});
export const decodeHead = (m: pb.GetHeadResponse): ChainHead => {
  const h = parse(HeadSchema, m, 'head');
  return { blockNumber: BigInt(h.blockNumber), blockHash: h.blockHash as Hex, timestamp: BigInt(h.timestamp) };
};

const ReadCallSchema = z.object({ to: AddressSchema, data: HexSchema });
const ReadRequestSchema = z.object({ calls: z.array(ReadCallSchema), block: UintSchema.optional() });

export const encodeReadRequest = (calls: readonly ReadCall[], block: bigint | 'latest' | undefined): pb.ReadRequest => ({
  calls: calls.map((c) => ({ to: c.to, data: c.data })),
  block: block === undefined || block === 'latest' ? undefined : block.toString(),
});
export const encodeReadCalls = (calls: readonly ReadCall[]): pb.ReadCall[] => calls.map((c) => ({ to: c.to, data: c.data }));
export const decodeReadCalls = (m: readonly pb.ReadCall[]): ReadCall[] =>
  parse(z.array(ReadCallSchema), m, 'read calls').map((c) => ({ to: c.to as Address, data: c.data as Hex }));
export const decodeReadRequest = (m: pb.ReadRequest): { calls: ReadCall[]; block: bigint | 'latest' } => {
  const r = parse(ReadRequestSchema, m, 'read');
  return {
    calls: r.calls.map((c) => ({ to: c.to as Address, data: c.data as Hex })),
    block: r.block === undefined ? 'latest' : BigInt(r.block),
  };
};

const ReadCallResultSchema = z.object({
  result: z.discriminatedUnion('$case', [
    z.object({ $case: z.literal('success'), value: z.object({ returnData: HexSchema }) }),
    z.object({ $case: z.literal('failure'), value: z.object({ revertData: HexSchema, reason: z.string() }) }),
  ]),
});
const ReadResponseSchema = z.object({ blockNumber: UintSchema, results: z.array(ReadCallResultSchema) });

const encodeReadCallResult = (x: ReadCallResult): pb.ReadCallResult =>
  x.success
    ? { result: { $case: 'success', value: { returnData: x.returnData } } }
    : { result: { $case: 'failure', value: { revertData: x.revertData, reason: x.reason } } };
const decodeReadCallResult = ({ result: x }: z.output<typeof ReadCallResultSchema>): ReadCallResult =>
  x.$case === 'success'
    ? { success: true, returnData: x.value.returnData as Hex }
    : { success: false, revertData: x.value.revertData as Hex, reason: x.value.reason };

export const encodeReadResult = (r: ReadResult): pb.ReadResponse => ({
  blockNumber: r.blockNumber.toString(),
  results: r.results.map(encodeReadCallResult),
});
export const decodeReadResult = (m: pb.ReadResponse): ReadResult => {
  const r = parse(ReadResponseSchema, m, 'read');
  return { blockNumber: BigInt(r.blockNumber), results: r.results.map(decodeReadCallResult) };
};

const ReceiptSchema = z.object({
  transactionHash: HashSchema,
  success: z.boolean(),
  blockNumber: UintSchema,
  blockHash: HashSchema,
  from: AddressSchema,
  to: AddressSchema.optional(),
  logs: z.array(z.object({ address: AddressSchema, topics: z.array(HashSchema), data: HexSchema, logIndex: z.number().int().min(0) })),
  confirmations: UintSchema,
  blockTimestamp: UintSchema,
});

const LogSchema = z.object({ address: AddressSchema, topics: z.array(HashSchema), data: HexSchema, logIndex: z.number().int().min(0) });
const ChainLogSchema = z.object({ log: LogSchema, blockNumber: UintSchema, blockHash: HashSchema, transactionHash: HashSchema });
const LogsQuerySchema = z.object({
  address: AddressSchema,
  topics: z.array(z.object({ anyOf: z.array(HashSchema) })).max(4),
  fromBlock: UintSchema,
  toBlock: UintSchema.optional(),
});

export const encodeLogsQuery = (q: LogQuery): pb.GetLogsRequest => ({
  address: q.address,
  topics: q.topics.map((t) => ({ anyOf: t === null ? [] : typeof t === 'string' ? [t] : [...t] })),
  fromBlock: q.fromBlock.toString(),
  toBlock: q.toBlock?.toString(),
});
export function decodeLogsQuery(m: pb.GetLogsRequest): LogQuery {
  const q = parse(LogsQuerySchema, m, 'logs query');
  return compact({
    address: q.address as Address,
    topics: q.topics.map((t) => (t.anyOf.length === 0 ? null : t.anyOf.length === 1 ? (t.anyOf[0] as Hex) : (t.anyOf as Hex[]))),
    fromBlock: BigInt(q.fromBlock),
    toBlock: q.toBlock === undefined ? undefined : BigInt(q.toBlock),
  });
}
export const encodeLogs = (r: LogsResult): pb.GetLogsResponse => ({
  logs: r.logs.map((l) => ({
    log: { address: l.address, topics: [...l.topics], data: l.data, logIndex: l.logIndex },
    blockNumber: l.blockNumber.toString(),
    blockHash: l.blockHash,
    transactionHash: l.transactionHash,
  })),
  toBlock: r.toBlock.toString(),
});
export function decodeLogs(m: pb.GetLogsResponse): LogsResult {
  const r = parse(z.object({ logs: z.array(ChainLogSchema), toBlock: UintSchema }), m, 'logs');
  return {
    logs: r.logs.map((l) => ({
      address: l.log.address as Address,
      topics: l.log.topics as Hex[],
      data: l.log.data as Hex,
      logIndex: l.log.logIndex,
      blockNumber: BigInt(l.blockNumber),
      blockHash: l.blockHash as Hex,
      transactionHash: l.transactionHash as Hex,
    })),
    toBlock: BigInt(r.toBlock),
  };
}

export const encodeFees = (f: GasFees): pb.GetFeesResponse => ({
  maxFeePerGas: f.maxFeePerGas.toString(),
  maxPriorityFeePerGas: f.maxPriorityFeePerGas.toString(),
  baseFeePerGas: f.baseFeePerGas.toString(),
});
export function decodeFees(m: pb.GetFeesResponse): GasFees {
  const f = parse(z.object({ maxFeePerGas: UintSchema, maxPriorityFeePerGas: UintSchema, baseFeePerGas: UintSchema }), m, 'fees');
  return { maxFeePerGas: BigInt(f.maxFeePerGas), maxPriorityFeePerGas: BigInt(f.maxPriorityFeePerGas), baseFeePerGas: BigInt(f.baseFeePerGas) };
}

export const decodeReceiptRequest = (m: pb.GetTransactionReceiptRequest): Hex => parse(HashSchema, m.hash, 'hash') as Hex;

export function encodeReceipt(r: TransactionReceiptInfo | undefined): pb.GetTransactionReceiptResponse {
  if (!r) return { result: { $case: 'notFound', value: {} } };
  return {
    result: {
      $case: 'receipt',
      value: {
        transactionHash: r.transactionHash,
        success: r.status === 'success',
        blockNumber: r.blockNumber.toString(),
        blockHash: r.blockHash,
        from: r.from,
        to: r.to,
        logs: r.logs.map((l) => ({ address: l.address, topics: [...l.topics], data: l.data, logIndex: l.logIndex })),
        confirmations: r.confirmations.toString(),
        blockTimestamp: r.blockTimestamp.toString(),
      },
    },
  };
}

export function decodeReceipt(m: pb.GetTransactionReceiptResponse): TransactionReceiptInfo | undefined {
  switch (m.result?.$case) {
    case 'notFound':
      return undefined;
    case 'receipt': {
      const r = parse(ReceiptSchema, m.result.value, 'receipt');
      return compact({
        transactionHash: r.transactionHash as Hex,
        status: r.success ? ('success' as const) : ('reverted' as const),
        blockNumber: BigInt(r.blockNumber),
        blockHash: r.blockHash as Hex,
        blockTimestamp: BigInt(r.blockTimestamp),
        from: r.from as Address,
        to: r.to as Address | undefined,
        logs: r.logs.map((l) => ({ address: l.address as Address, topics: l.topics as Hex[], data: l.data as Hex, logIndex: l.logIndex })),
        confirmations: BigInt(r.confirmations),
      });
    }
    case undefined:
      throw new WireFormatError('invalid_message', 'malformed receipt: neither receipt nor not_found');
  }
}

export const encodeSenders = (addresses: readonly Address[]): pb.GetSendersResponse => ({ addresses: [...addresses] });
export const decodeSenders = (m: pb.GetSendersResponse): Address[] => parse(z.array(AddressSchema), m.addresses, 'addresses') as Address[];

// ───────────────────────────── sending accounts ─────────────────────────────

const PURPOSE_KINDS: Readonly<Record<SendPurposeKind, pb.SendPurposeKind>> = {
  x402Settlement: pb.SendPurposeKind.SEND_PURPOSE_KIND_X402_SETTLEMENT,
  faucetTransfer: pb.SendPurposeKind.SEND_PURPOSE_KIND_FAUCET_TRANSFER,
};

export const encodePurposeKind = (k: SendPurposeKind): pb.SendPurposeKind => PURPOSE_KINDS[k];
export function decodePurposeKind(k: pb.SendPurposeKind): SendPurposeKind {
  const found = (Object.keys(PURPOSE_KINDS) as SendPurposeKind[]).find((name) => PURPOSE_KINDS[name] === k);
  if (!found) throw new WireFormatError('invalid_message', `malformed purpose: unknown kind ${k}`);
  return found;
}

export const encodeSendingAccount = (a: Address | undefined): pb.GetSendingAccountResponse => (a ? { address: a } : {});
export const decodeSendingAccount = (m: pb.GetSendingAccountResponse): Address | undefined =>
  m.address === undefined ? undefined : (parse(AddressSchema, m.address, 'address') as Address);

const X402SettlementSchema = z.object({
  token: AddressSchema,
  authorization: z.object({
    from: AddressSchema,
    to: AddressSchema,
    value: UintSchema,
    validAfter: UintSchema,
    validBefore: UintSchema,
    nonce: HashSchema,
  }),
  signature: HexSchema,
});

// The worker checks every rule of a purpose itself (accountSender.ts): the wire only has to carry well-formed fields.
const FaucetTransferSchema = z.object({
  id: z.string().min(1).max(64),
  asset: z.union([z.literal('native'), AddressSchema]),
  to: AddressSchema,
  amount: UintSchema,
});

type PurposeMessage = pb.SignSendRequest['purpose'];

function encodePurpose(p: SendPurpose): PurposeMessage {
  if (p.kind === 'faucetTransfer') return { $case: 'faucetTransfer', value: { id: p.id, asset: p.asset, to: p.to, amount: p.amount } };
  return { $case: 'x402Settlement', value: { token: p.token, authorization: { ...p.authorization }, signature: p.signature } };
}
function decodePurpose(m: PurposeMessage): SendPurpose {
  switch (m?.$case) {
    case 'x402Settlement': {
      const v = parse(X402SettlementSchema, m.value, 'x402Settlement');
      return { kind: 'x402Settlement', token: v.token as Address, authorization: v.authorization as Eip3009Authorization, signature: v.signature as Hex };
    }
    case 'faucetTransfer': {
      const v = parse(FaucetTransferSchema, m.value, 'faucetTransfer');
      return { kind: 'faucetTransfer', id: v.id, asset: v.asset as 'native' | Address, to: v.to as Address, amount: v.amount };
    }
    case undefined:
      throw new WireFormatError('invalid_message', 'malformed purpose: none given');
  }
}

export const encodeSignSend = (p: SendPurpose): pb.SignSendRequest => ({ purpose: encodePurpose(p) });
export const decodeSignSend = (m: pb.SignSendRequest | pb.SimulateSendRequest): SendPurpose => decodePurpose(m.purpose);

const SEND_FAILURE_CODES = [
  'purpose_refused',
  'no_account',
  'simulation_reverted',
  'expired',
  'unknown_transaction',
  'insufficient_funds',
  'send_failed',
  'rpc_unavailable',
] as const satisfies readonly SendFailureCode[];
const SendFailureSchema = z.object({ code: z.enum(SEND_FAILURE_CODES), message: z.string() });

const SignedSendSchema = z.object({
  hash: HashSchema,
  account: AddressSchema,
  nonce: z.number().int().min(0),
  purpose: z.nativeEnum(pb.SendPurposeKind),
  token: AddressSchema.optional(),
  from: AddressSchema.optional(),
  authorizationNonce: HashSchema.optional(),
  sendBy: z.number().int().min(0),
});

export function encodeSignSendResult(r: Result<SignedSend, SendFailure>): pb.SignSendResponse {
  if (!r.ok) return { result: { $case: 'failure', value: { ...r.error } } };
  return { result: { $case: 'signed', value: { ...r.value, purpose: encodePurposeKind(r.value.purpose) } } };
}
export function decodeSignSendResult(m: pb.SignSendResponse): Result<SignedSend, SendFailure> {
  switch (m.result?.$case) {
    case 'failure':
      return err(parse(SendFailureSchema, m.result.value, 'failure'));
    case 'signed': {
      const v = parse(SignedSendSchema, m.result.value, 'signed');
      return ok(
        compact({
          hash: v.hash as Hex,
          account: v.account as Address,
          nonce: v.nonce,
          purpose: decodePurposeKind(v.purpose),
          token: v.token as Address | undefined,
          from: v.from as Address | undefined,
          authorizationNonce: v.authorizationNonce as Hex | undefined,
          sendBy: v.sendBy,
        }),
      );
    }
    case undefined:
      throw new WireFormatError('invalid_message', 'malformed sign result: neither signed nor failure');
  }
}

export const decodeHashRequest = (m: { hash: string }): Hex => parse(HashSchema, m.hash, 'hash') as Hex;

/** SendSigned's and AbandonSigned's answer: ok, or the failure. */
export const encodeSendResult = (r: Result<void, SendFailure>): pb.SendSignedResponse => (r.ok ? {} : { failure: { ...r.error } });
export const decodeSendResult = (m: pb.SendSignedResponse): Result<void, SendFailure> =>
  m.failure === undefined ? ok(undefined) : err(parse(SendFailureSchema, m.failure, 'failure'));

// ───────────────────────────── named reads ─────────────────────────────

const AuthorizationRefSchema = z.object({ token: AddressSchema, authorizer: AddressSchema, nonce: HashSchema });

export const encodeAuthorizationRef = (a: AuthorizationRef): pb.AuthorizationRef => ({ token: a.token, authorizer: a.authorizer, nonce: a.nonce });
export const decodeAuthorizationRef = (m: pb.AuthorizationRef | undefined): AuthorizationRef => parse(AuthorizationRefSchema, m, 'authorization') as AuthorizationRef;

export const decodeAddress = (s: string, what: string): Address => parse(AddressSchema, s, what) as Address;
export const decodeHex = (s: string, what: string): Hex => parse(HexSchema, s, what) as Hex;
export const decodeBytes32 = (s: string, what: string): Hex => parse(HashSchema, s, what) as Hex;
export const decodeUint = (s: string, what: string): bigint => BigInt(parse(UintSchema, s, what));
export const decodeOptionalHash = (s: string | undefined, what: string): Hex | undefined => (s === undefined ? undefined : decodeBytes32(s, what));
