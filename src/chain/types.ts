import type { Address, Hex } from 'viem';
import type { Call, SignedUserOperation } from '../api/v1alpha1/index.ts';
import type { ChainName } from '../config/chains.ts';
import type { Result } from '../lib/result.ts';
import type { Outflow, OutflowsUnavailable } from './outflows.ts';

export type { Outflow, OutflowKind, OutflowsUnavailable } from './outflows.ts';

/**
 * The chain worker's contract. In the embedded mode the controller calls an in-process implementation; in a
 * cluster the same interface is served over gRPC (proto/chainworker/v1), one worker per chain. Everything
 * here must therefore be plain data (bigints as decimal strings where they cross the wire).
 */

/** Identifies a wallet: the owner key is derived from (service secret, apiClient); the salt from agentId. */
export interface WalletRef {
  apiClient: string;
  agentId: string;
}

export interface WalletInfo {
  address: Address;
  deployed: boolean;
}

export interface TokenBalance {
  symbol: string;
  address: Address;
  decimals: number;
  raw: string;
}
export interface WalletBalances {
  address: Address;
  deployed: boolean;
  nativeWei: string;
  tokens: TokenBalance[];
}

export interface SimulationResult {
  wallet: WalletInfo;
  /** Gas the whole UserOperation may use (verification + call + paymaster + pre-verification). */
  estimatedGas: bigint;
  /** Gas of the calls alone, as executed from the wallet. */
  callGas: bigint;
  /** Current max fee per gas the worker would sign with. */
  maxFeePerGas: bigint;
  estimatedCostWei: bigint;
  estimatedCostUsd: number;
  /**
   * On an L2: the part of estimatedGas (in preVerificationGas) that pays the L1 data fee, and its cost at
   * maxFeePerGas, part of estimatedCostWei (src/chain/l1DataFee.ts). Absent on a chain without one.
   */
  l1Data?: { gas: bigint; costWei: bigint };
  /** The reads asked for with `observe`, before and after the calls (absent when none were asked for). */
  observed?: Observed;
  /**
   * Asked with `outflows`: what leaves the wallet (src/chain/outflows.ts), in execution order; `[]` when nothing
   * does. Absent when not asked, or when the chain cannot say (then `outflowsUnavailable` says why).
   */
  outflows?: Outflow[];
  outflowsUnavailable?: OutflowsUnavailable;
}

/** What a simulation measured: each observed read before the calls and after them, in the order asked. */
export interface Observed {
  before: ReadCallResult[];
  after: ReadCallResult[];
}

/** Gas prices in wei: maxFeePerGas = 2 × the base fee + the tip, what operations and bundles are signed with. */
export interface GasFees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  baseFeePerGas: bigint;
}

export interface SimulateOptions {
  /**
   * Reads (eth_calls the caller encodes) to run before and after the calls, on the state the calls leave:
   * what a protocol action will change (balances, a position). At most MAX_READ_CALLS.
   */
  observe?: readonly ReadCall[];
  /**
   * Also find what the calls move out of the wallet: every token transfer from it and native value it sends,
   * nested ones included (one more RPC call, eth_simulateV1; see src/chain/simulateOutflows.ts).
   */
  outflows?: boolean;
}

export type SimulationFailureCode =
  | 'simulation_reverted' // a call reverted; revertReason says why
  | 'insufficient_funds' // the wallet cannot cover the value it sends
  | 'rpc_unavailable'; // the chain did not answer: operational, retry
export interface SimulationFailure {
  code: SimulationFailureCode;
  message: string;
  /** Index in the batch of the call that failed, when known. */
  callIndex?: number;
  revertReason?: string;
  revertData?: Hex;
}

export type OperationOutcome =
  /** The bundler holds it and will try to include it. */
  | { state: 'pending' }
  /** Neither the bundler nor the chain knows it (e.g. after a restart): re-submit the same operation. */
  | { state: 'unknown' }
  /**
   * In a block. Final once `confirmations` reaches `requiredConfirmations` (the chain's configured depth);
   * until then a reorg can still remove it, and asking again re-checks it against the chain.
   */
  | {
      state: 'included';
      success: boolean;
      txHash: Hex;
      blockNumber: string;
      blockHash: Hex;
      /** Blocks from the inclusion to the head, the inclusion's own counted (1 = in the latest block; 0 = not visible yet). */
      confirmations: number;
      requiredConfirmations: number;
      actualGasUsed: string;
      actualGasCostWei: string;
      revertReason?: string;
      revertData?: Hex;
    }
  /** Will never be included (validation failed, sponsorship expired, nonce used by another op). */
  | { state: 'dropped'; code: string; message: string };

/** What `withdrawOperation` did. */
export type WithdrawResult =
  /**
   * No bundle transaction carried it and none ever will: it is settled as dropped with code `withdrawn`, with every
   * later operation of its wallet that no bundle carried either (`withdrawn`: their hashes, the one asked first).
   * Their nonces are free again: the wallet's next signed operation takes the lowest of them.
   */
  | { state: 'withdrawn'; withdrawn: Hex[] }
  /** Not withdrawn: a bundle transaction carried it (or the chain has used its nonce, or it is settled): its outcome comes as usual. */
  | { state: 'sent' };

export interface PrepareOptions {
  requestId: string;
}

/** The chain's latest block as the worker's RPC endpoint sees it. */
export interface ChainHead {
  blockNumber: bigint;
  blockHash: Hex;
  /** The block's timestamp, Unix seconds. */
  timestamp: bigint;
}

/** One `eth_call` of a read: the caller encodes `data` (and decodes the answer) with its own viem ABI. */
export interface ReadCall {
  to: Address;
  data: Hex;
}

/**
 * In a simulation's observed reads (observeCalls), a read addressed to the zero address goes to the simulation
 * lens itself: `nativeBalance(address)` measures native coin as balanceOf measures a token. Nothing real lives at
 * the zero address, so no other read means it.
 */
export const LENS_READ_TARGET: Address = '0x0000000000000000000000000000000000000000';
export const lensNativeBalanceAbi = [
  { type: 'function', name: 'nativeBalance', stateMutability: 'view', inputs: [{ name: 'account', type: 'address' }], outputs: [{ type: 'uint256' }] },
] as const;

export interface ReadOptions {
  /** The block every call runs at (default 'latest': the head, pinned once for the whole read). */
  block?: bigint | 'latest';
}

/** What one call of a read returned; a failing call never fails the others. */
export type ReadCallResult =
  | { success: true; returnData: Hex }
  /** The call reverted or halted: its revert data ('0x' when none, e.g. out of gas) and a readable reason. */
  | { success: false; revertData: Hex; reason: string };

export interface ReadResult {
  /** The block all calls ran at (the head when the read asked for 'latest'). */
  blockNumber: bigint;
  /** One per call, in the order of the calls. */
  results: ReadCallResult[];
}

export interface ReceiptLog {
  /** The emitting contract, checksummed. */
  address: Address;
  topics: Hex[];
  data: Hex;
  /** Position of the log in its block. */
  logIndex: number;
}

/**
 * Which logs to fetch: one contract's, by topic (each position one value, any of several, or null for any), over
 * a block range of at most MAX_LOG_RANGE_BLOCKS (a protocol's event log: what a GMX order's keeper did to it).
 */
export interface LogQuery {
  address: Address;
  /** topics[0] is the event's signature hash; at most 4. */
  topics: readonly (Hex | readonly Hex[] | null)[];
  fromBlock: bigint;
  /** Default: the head, or fromBlock + MAX_LOG_RANGE_BLOCKS − 1 when the head is further. */
  toBlock?: bigint;
}

/** The most blocks one getLogs spans: RPC providers bound a log query's range. */
export const MAX_LOG_RANGE_BLOCKS = 10_000n;

/** A log with where it was mined. */
export interface ChainLog extends ReceiptLog {
  blockNumber: bigint;
  blockHash: Hex;
  transactionHash: Hex;
}

export interface LogsResult {
  logs: ChainLog[];
  /** The last block the query covered: the next query of the same logs starts after it. */
  toBlock: bigint;
}

/** A mined transaction's receipt with its logs (what payment verification reads ERC-20 Transfer events from). */
export interface TransactionReceiptInfo {
  transactionHash: Hex;
  status: 'success' | 'reverted';
  blockNumber: bigint;
  blockHash: Hex;
  /** The including block's timestamp, Unix seconds: when the chain says the transaction happened. */
  blockTimestamp: bigint;
  from: Address;
  /** Absent for a contract creation. */
  to?: Address;
  logs: ReceiptLog[];
  /** head − blockNumber + 1 when it was read: 1 in the head block itself. */
  confirmations: bigint;
}

export interface ChainWorker {
  readonly chain: ChainName;
  resolveWallet(ref: WalletRef): Promise<WalletInfo>;
  getBalances(ref: WalletRef): Promise<WalletBalances>;
  simulate(ref: WalletRef, calls: readonly Call[], opts?: SimulateOptions): Promise<Result<SimulationResult, SimulationFailure>>;
  /**
   * Allocates the next nonce of the wallet (under the (chain, sender) lock), builds the UserOperation with
   * the paymaster's sponsorship and signs it. Nothing is sent: the caller persists the result first.
   */
  prepareOperation(ref: WalletRef, calls: readonly Call[], opts: PrepareOptions): Promise<SignedUserOperation>;
  /** Hands a signed operation to the bundler. Idempotent by operation hash; never re-signs. */
  submitOperation(op: SignedUserOperation): Promise<void>;
  getOperationOutcome(op: SignedUserOperation): Promise<OperationOutcome>;
  /**
   * Takes a signed operation back from the built-in bundler if no bundle transaction has carried it (the kill
   * switch), with the later operations of its wallet (see WithdrawResult). Atomic with the bundler loop; under the
   * wallet's nonce lock. Idempotent: asked again, a withdrawn operation answers `withdrawn` (from the worker's
   * memory; a restarted worker that does not hold it and whose chain has not used its nonce withdraws it anew).
   * Errors: rpc_unavailable (the chain's nonce could not be read for an operation the worker does not hold).
   */
  withdrawOperation(op: SignedUserOperation): Promise<WithdrawResult>;
  /** Tells the worker which signed operations are still in flight (after a restart), so nonces are not reused. */
  restoreInFlight(ops: readonly SignedUserOperation[]): Promise<void>;
  /** Pushes outcomes as they happen so the controller need not poll. Returns an unsubscribe function. */
  onOutcome(listener: (opHash: Hex, outcome: OperationOutcome) => void): () => void;
  /**
   * A worker in another process: called when its outcome stream is re-established after a break. It may have
   * restarted and lost what it held in memory (queued operations, nonces in flight), so the controller
   * restores it and re-checks its in-flight requests now rather than at the next poll. Returns an unsubscribe.
   */
  onReconnect?(listener: () => void): () => void;
  /** The chain's latest block (the gateway's /health probe). Errors: rpc_unavailable. */
  getHead(): Promise<ChainHead>;
  /**
   * The gas prices the worker signs and sends with now (read at most once a second): what a protocol that charges
   * for its own keepers' gas (GMX's execution fee, checked against the bundle's gas price) is priced from.
   * Errors: rpc_unavailable.
   */
  getFees(): Promise<GasFees>;
  /**
   * Many `eth_call`s at one block in one round trip (a JSON-RPC batch at a pinned block number). Each call
   * succeeds or fails on its own. Errors: invalid_request (more than MAX_READ_CALLS calls, a block beyond the
   * head), rpc_unavailable (the chain did not answer, or answered something that is not a call's failure).
   *
   * @example
   * const { results } = await worker.read([{ to: usdc, data: encodeFunctionData({ abi, functionName: 'balanceOf', args: [a] }) }]);
   * if (results[0]!.success) decodeFunctionResult({ abi, functionName: 'balanceOf', data: results[0]!.returnData });
   */
  read(calls: readonly ReadCall[], opts?: ReadOptions): Promise<ReadResult>;
  /** A transaction's receipt with its logs and confirmations, or undefined when the chain has not mined it. */
  getTransactionReceipt(hash: Hex): Promise<TransactionReceiptInfo | undefined>;
  /**
   * One contract's logs by topic over a bounded block range (at most MAX_LOG_RANGE_BLOCKS). Errors:
   * invalid_request (a range beyond the bound, past the head, or more than 4 topics), rpc_unavailable.
   */
  getLogs(query: LogQuery): Promise<LogsResult>;
  /**
   * The accounts this worker sends transactions from (its bundles' executors and its sending accounts: the x402
   * settler, the faucet). A transaction one of them sent is the service's own, never a caller's payment: payment
   * verification refuses it.
   */
  senders(): Promise<Address[]>;
  // Named reads: what x402 verification and the faucet ask of a chain, each narrow, so neither needs an RPC URL
  // of its own and neither gets a generic passthrough (worker/namedReads.ts).
  /** The code at an address, '0x' when it has none (whether a token is a contract, a payer a deployed wallet). */
  getCode(address: Address): Promise<Hex>;
  /**
   * ERC-1271: whether the contract at `account` accepts `signature` over `digest` (isValidSignature answers the
   * magic value). False when it has no code, reverts or answers anything else.
   */
  isValidSignature(account: Address, digest: Hex, signature: Hex): Promise<boolean>;
  /**
   * balanceOf(owner) of one of the chain's configured tokens, at `block` (default: the head). Errors:
   * invalid_request (a token the chain does not configure), rpc_unavailable.
   */
  tokenBalance(token: Address, owner: Address, block?: bigint): Promise<bigint>;
  /**
   * EIP-3009 authorizationState(authorizer, nonce) of one of the chain's EIP-3009 tokens: true when the token
   * spent (or the payer canceled) that authorization. Errors: invalid_request (not such a token), rpc_unavailable.
   */
  authorizationState(id: AuthorizationRef): Promise<boolean>;
  /**
   * The transaction that spent an EIP-3009 authorization (its AuthorizationUsed event) in the last
   * `lookbackBlocks` blocks, or undefined. Errors: invalid_request (not such a token, lookback above
   * MAX_LOOKBACK_BLOCKS), rpc_unavailable.
   */
  findAuthorizationUse(id: AuthorizationRef, lookbackBlocks: bigint): Promise<Hex | undefined>;
  close(): Promise<void>;
}

/**
 * The EIP-3009 authorization a payer signed (x402 `exact`): the token moves `value` from `from` to `to` once,
 * between validAfter and validBefore (Unix seconds). Amounts and times as decimal strings, as on the wire.
 */
export interface Eip3009Authorization {
  from: Address;
  to: Address;
  value: string;
  validAfter: string;
  validBefore: string;
  /** bytes32, chosen by the payer: the token spends each (from, nonce) once. */
  nonce: Hex;
}

/** One EIP-3009 authorization of a token: the token spends each (authorizer, nonce) once. */
export interface AuthorizationRef {
  token: Address;
  authorizer: Address;
  /** bytes32. */
  nonce: Hex;
}

/**
 * Why the service sends a transaction from one of its own accounts. Named purposes only: the worker builds the
 * calldata itself from these fields, so no caller can make a sending account send anything else.
 */
export type SendPurpose =
  | {
      kind: 'x402Settlement';
      /** One of the chain's EIP-3009 tokens accepted for payment; `authorization.to` must be the chain's treasury. */
      token: Address;
      authorization: Eip3009Authorization;
      /** The payer's signature: 65 bytes (v, r, s) or longer (an ERC-1271 wallet's bytes). */
      signature: Hex;
    }
  | {
      /**
       * A drip of the faucet: the chain's native coin, or one of its configured tokens, moved to `to` (an ERC-20
       * transfer). At most the chain's faucet cap for that asset (ChainConfig.faucetCap); never to the chain's
       * treasury or one of the worker's own accounts.
       */
      kind: 'faucetTransfer';
      /** The caller's id of this drip (1-64 of [A-Za-z0-9_-]): signing the same id again answers the same transaction. */
      id: string;
      /** 'native', or a token address of the chain's configuration. */
      asset: 'native' | Address;
      to: Address;
      /** In the asset's smallest unit, a decimal string above 0. */
      amount: string;
    };
export type SendPurposeKind = SendPurpose['kind'];
export type X402SettlementPurpose = Extract<SendPurpose, { kind: 'x402Settlement' }>;
export type FaucetTransferPurpose = Extract<SendPurpose, { kind: 'faucetTransfer' }>;

/** A transaction signed for a purpose and not necessarily sent: what a caller claims before it asks for the send. */
export interface SignedSend {
  /** The transaction's hash: the hash it will have on chain, the very bytes signed. */
  hash: Hex;
  /** The sending account (for x402 settlements: the settler). */
  account: Address;
  /** The account's transaction nonce. */
  nonce: number;
  purpose: SendPurposeKind;
  /** The token the transaction moves; absent for the native coin. */
  token?: Address;
  /** For an x402 settlement: the authorization it spends (its signer and nonce). */
  from?: Address;
  authorizationNonce?: Hex;
  /**
   * Unix ms: a transaction not sent by then is never sent; the worker frees or fills its nonce, and send
   * answers `expired`.
   */
  sendBy: number;
}

export type SendFailureCode =
  | 'purpose_refused' // outside the purpose's rules (a token not accepted, another recipient, malformed fields)
  | 'no_account' // this worker has no sending account for the purpose
  | 'simulation_reverted' // the transaction would revert (an authorization already spent, an expired one, low balance)
  | 'expired' // send after sendBy: the transaction was dropped, sign again
  | 'unknown_transaction' // not signed here (or this worker restarted since: nothing it signed was sent)
  | 'insufficient_funds' // the sending account cannot pay the gas (or the value) of the transaction
  | 'send_failed' // the node refused the broadcast
  | 'rpc_unavailable';
export interface SendFailure {
  code: SendFailureCode;
  message: string;
}

/**
 * The service's own sending accounts on one chain (the x402 settler, the faucet), each with its nonces owned by the chain
 * worker. Two phases so a caller can claim what a transaction spends before anything is sent: `signSend`
 * reserves a nonce and signs, the caller records the hash, `send` broadcasts those very bytes. Read the
 * outcome with the worker's getTransactionReceipt.
 */
export interface SendingAccounts {
  /** The address sending for a purpose on this chain, or undefined when none is configured. */
  sendingAccount(purpose: SendPurposeKind): Promise<Address | undefined>;
  /**
   * Signs the transaction a purpose asks for, under the account's nonce lock. Idempotent by what it spends: while
   * a transaction for the same authorization is signed and not sent (nor expired), that one is answered again.
   */
  signSend(purpose: SendPurpose): Promise<Result<SignedSend, SendFailure>>;
  /**
   * Runs the transaction a purpose asks for as a call from its account, sending nothing and taking no nonce: x402
   * verification's simulation of a settlement. Failures: purpose_refused, simulation_reverted (the message has
   * the decoded reason), rpc_unavailable.
   */
  simulateSend(purpose: SendPurpose): Promise<Result<void, SendFailure>>;
  /** Broadcasts a transaction signSend answered. Idempotent: sending one already sent answers ok. */
  send(hash: Hex): Promise<Result<void, SendFailure>>;
  /**
   * The caller will not send it (its claim was refused): its send window closes now rather than at sendBy, so the
   * account's later transactions do not wait behind its nonce. Idempotent; a sent transaction stays sent.
   */
  abandon(hash: Hex): Promise<Result<void, SendFailure>>;
}
