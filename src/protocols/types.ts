import type { Address, Hex } from 'viem';
import type { z } from 'zod';
import type { Call, ProtocolOrderState } from '../api/v1alpha1/index.ts';
import type { ChainWorker, GasFees, ReceiptLog, SimulationFailure, SimulationResult } from '../chain/types.ts';
import type { Result } from '../lib/result.ts';
import type { ChainName } from '../config/chains.ts';
import type { ProtocolKey, ProtocolsConfig } from './config.ts';
import type { TokenInfo } from './common/amounts.ts';
import type { Observation } from './common/effects.ts';
import type { ProtocolRevert } from './common/errors.ts';
import type { Reader } from './common/reads.ts';

export type ConfigOf<K extends ProtocolKey> = NonNullable<ProtocolsConfig[K]>;

/** What every endpoint of a family gets: its chain, the protocol's configuration there, and batched reads. */
export interface ProtocolContext<K extends ProtocolKey> {
  chain: ChainName;
  config: ConfigOf<K>;
  read: Reader;
  /** The chain's latest block time (Unix seconds): interest accrued since a protocol's last update is computed to it. */
  now(): Promise<bigint>;
  /** The chain's event logs and receipts (what a keeper did to an order), through the chain worker. */
  events: Pick<ChainWorker, 'getLogs' | 'getTransactionReceipt'>;
  /** The gas prices operations are signed and bundles sent with now (a keeper's execution fee is priced from them). */
  fees(): Promise<GasFees>;
}

/** An endpoint about an agent also gets the agent's smart wallet (resolved, counterfactual or not). */
export interface AgentContext<K extends ProtocolKey> extends ProtocolContext<K> {
  agentId: string;
  wallet: Address;
  /** The wallet's native coin (ETH) now: no contract read gives it, so the chain worker does. */
  nativeBalance(): Promise<bigint>;
  /**
   * Simulates calls from the wallet (as the chain worker simulates an operation; nothing is signed): for a protocol
   * whose clients check an action with a call made to revert (GMX's simulateExecuteLatestOrder).
   */
  simulate(calls: readonly Call[]): Promise<Result<SimulationResult, SimulationFailure>>;
}

/**
 * A read: typed JSON from on-chain reads, nothing executed. A GET by default; `method: 'POST'` for a computation
 * the caller describes in a body (a swap quote: tokens, amounts, a route), whose input is then the JSON body.
 */
export interface ReadEndpoint<K extends ProtocolKey, I extends z.ZodType = z.ZodObject, O extends z.ZodType = z.ZodType, A extends boolean = boolean> {
  kind: 'read';
  /** The path after the slug, e.g. `position`, `swap/quote`. */
  path: string;
  /** GET (the default: `query` is the query string) or POST (`query` is the JSON body). */
  method?: 'GET' | 'POST';
  summary: string;
  /** For /openapi.json, the CLI and the MCP tool: what it answers, when to use it. */
  description: string;
  /** The query string's fields (GET, an object), or the body (POST, any object schema, e.g. a union of alternatives). */
  query: I;
  output: O;
  /** A read about an agent gets its wallet (its query has agent_id). */
  agent: A;
  run(ctx: A extends true ? AgentContext<K> : ProtocolContext<K>, query: z.output<I>): Promise<z.output<O>>;
}

/** The calls an action makes (approvals included), and what its simulation should measure. */
export interface ActionPlan<P> {
  calls: Call[];
  /** Tokens whose wallet balances the simulation reports before and after. */
  tokens: TokenInfo[];
  /** The position the action changes, before and after. */
  position?: Observation<P>;
  /**
   * Absolute bounds the plan derived from relative ones in the input (a minimum out from `slippage_bps` and a
   * quote, a deadline in unix seconds): stored in the request's action input over the caller's fields, so a retry,
   * a paid resend or a re-plan is held to the bounds the caller was first shown. Each in its input field's own type
   * (a raw amount as a string, a deadline as a number), so the stored input still parses. Lending derives none.
   */
  bounds?: Record<string, string | number>;
  /**
   * What the action would do when the protocol settles it later, at the current price (a perp order: its expected
   * fill, size, fees and liquidation price), in the family's `preview` schema: the simulation answers it.
   */
  preview?: unknown;
  /**
   * For an action its protocol settles later (ActionEndpoint.follow): when. `next_price`: at the keeper's next price
   * (seconds: a wait for the request includes it); `at_trigger`: when the price reaches the order's trigger.
   */
  settles?: 'next_price' | 'at_trigger';
}

/** The webhook events a followed request can add (src/webhooks/event.ts lists them with the rest). */
export type FollowedEventType =
  | 'perp.order_executed'
  | 'perp.order_cancelled'
  | 'perp.order_frozen'
  | 'perp.deposit_executed'
  | 'perp.deposit_cancelled'
  | 'perp.withdrawal_executed'
  | 'perp.withdrawal_cancelled';

/** What a keeper did to an order, as found in the protocol's logs. */
export interface OrderSettlement {
  state: Exclude<ProtocolOrderState, 'Pending'>;
  /** As the API shows it (perp-v2: USD per index token, decimal). */
  fillPrice?: string;
  /** The protocol's reason for a cancel or a freeze (perp-v2: the error's name). */
  reason?: string;
  txHash: Hex;
  blockNumber: bigint;
}

/**
 * An action whose protocol settles later what the operation created (a GMX order: a keeper executes or cancels it
 * after the create is confirmed). The order controller follows each confirmed request of such an action
 * (status.order, its webhook events), so the agent never polls the chain for it.
 */
export interface OrderFollow<K extends ProtocolKey> {
  /** The order the operation created, from the logs of that operation alone; undefined when it created none. */
  created(ctx: ProtocolContext<K>, logs: readonly ReceiptLog[]): { key: Hex } | undefined;
  /**
   * The latest settlement of the order in blocks fromBlock.. (as far as one bounded log query reaches), and the
   * last block searched: the next search starts after it.
   */
  settled(ctx: ProtocolContext<K>, key: Hex, fromBlock: bigint): Promise<{ settlement?: OrderSettlement; searchedTo: bigint }>;
  /** The webhook event of each state it can reach (a GMX deposit is never frozen). */
  events: Readonly<Partial<Record<OrderSettlement['state'], FollowedEventType>>>;
}

/** A POST endpoint (and its `.../simulate`): one batch UserOperation through the execute pipeline. */
export interface ActionEndpoint<K extends ProtocolKey, I extends z.ZodType = z.ZodType> {
  kind: 'action';
  path: string;
  summary: string;
  description: string;
  input: I;
  plan(ctx: AgentContext<K>, input: z.output<I>): Promise<ActionPlan<unknown>>;
  /**
   * Plan again when the operation is signed (a swap's route, a perp's execution fee follow the chain): the plan
   * then gets the stored input, its absolute bounds included, and must keep them. Its input schema declares the
   * bound fields, so a caller may also give them. Default: the calls planned at acceptance are signed.
   */
  replan?: boolean;
  /** The order the confirmed operation creates is settled later by the protocol (a GMX order): follow it. */
  follow?: OrderFollow<K>;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- a family's list holds endpoints of different schemas */
export type AnyEndpoint<K extends ProtocolKey> = ReadEndpoint<K, any, any, any> | ActionEndpoint<K, any>;

/**
 * A protocol family (`/protocols/<slug>/...`): one folder in src/protocols, one endpoint per file, declared here.
 * Routes, OpenAPI, CLI commands and MCP tools are generated from this declaration.
 */
export interface ProtocolFamily<K extends ProtocolKey = ProtocolKey> {
  /** The spec's slug: the contract. */
  slug: string;
  /** The protocol's own names, served as aliases (documented as such). */
  aliases: readonly string[];
  /** The protocol, as people call it. */
  protocol: string;
  /** Its section of a chain's `protocols` configuration. */
  key: K;
  /** The schema of that section (the family's config.ts): a chain's configuration is validated by it. */
  config: z.ZodType<ConfigOf<K>>;
  /**
   * The chains it runs on, the first the default. A request's `chain` (optional) picks the deployment the action
   * or read uses: the family's section of that chain's `protocols` configuration, its wallet and its worker; the
   * request then runs on that chain. A chain not listed is 400 unsupported_chain (the endpoints' `chain` input,
   * from the same list); a listed chain that does not configure the family answers protocol_not_configured.
   */
  chains: readonly [ChainName, ...ChainName[]];
  description: string;
  /** The schema of a position, as effects report it before and after an action. */
  position: z.ZodType;
  /** The schema of ActionPlan.preview, for a family whose actions are settled later (perp-v2 orders). Optional. */
  preview?: z.ZodType;
  endpoints: readonly AnyEndpoint<K>[];
  /**
   * Shorter schemas of its own fields for the MCP tools, by field name (a tool list is read by a model on every
   * turn; the API checks every argument again with the full schema). Optional.
   */
  toolFields?: Readonly<Record<string, z.ZodType>>;
  /** The protocol's own error in revert data (Aave's numeric codes, Comet's and Morpho's errors), if it is one. */
  decodeRevert(data: Hex): ProtocolRevert | undefined;
  /**
   * Whether the configured deployment can be used: undefined when it can, else why not (perp-v2: its ExchangeRouter
   * is no longer a CONTROLLER in GMX's RoleStore, after an upgrade). Checked now and then; while unavailable only this
   * family's endpoints answer 503 protocol_unavailable, and /health says degraded. Optional.
   */
  availability?(ctx: ProtocolContext<K>): Promise<string | undefined>;
}

export type AnyFamily = ProtocolFamily<any>;

/** The chain a request to `family` runs on: the one it names (already one of the family's, by the input schema), or the default. */
export const familyChain = (family: Pick<AnyFamily, 'chains'>, asked: ChainName | undefined): ChainName => asked ?? family.chains[0];
/* eslint-enable @typescript-eslint/no-explicit-any */

/**
 * The endpoint declarations of one family, with its configuration key fixed once (TypeScript cannot take the key
 * explicitly and infer the schemas in one call).
 *
 * @example
 * const { read, action } = endpointsOf<'compoundV3'>(); export const markets = read({ path: 'markets', ... });
 */
export function endpointsOf<K extends ProtocolKey>() {
  return {
    read: <I extends z.ZodType, O extends z.ZodType, const A extends boolean>(e: Omit<ReadEndpoint<K, I, O, A>, 'kind'>): ReadEndpoint<K, I, O, A> => ({ kind: 'read', ...e }),
    action: <I extends z.ZodType>(e: Omit<ActionEndpoint<K, I>, 'kind'>): ActionEndpoint<K, I> => ({ kind: 'action', ...e }),
  };
}
