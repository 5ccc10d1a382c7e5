import { z } from 'zod';
import { ChainNameSchema } from '../../config/chains.ts';
import { API_VERSION, ConditionSchema, ObjectMetaSchema } from './meta.ts';

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
const Hex = z.string().regex(/^0x([0-9a-fA-F]{2})*$/);
const Hash = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
/** uint256 as a decimal string: JSON numbers cannot hold wei amounts. */
const UintString = z.string().regex(/^(0|[1-9][0-9]*)$/);

export const PAYMENT_MODES = ['manual', 'auto', 'sponsored'] as const;
export const PaymentModeSchema = z.enum(PAYMENT_MODES);
export type PaymentMode = z.infer<typeof PaymentModeSchema>;

export const CallSchema = z.object({ target: Address, value: UintString, data: Hex });
export type Call = z.infer<typeof CallSchema>;

/** Phases of spec §3, CamelCase as Kubernetes phases are; the API maps them to snake_case statuses. */
export const EXECUTION_PHASES = [
  'Pending',
  'PaymentRequired',
  'PaymentVerified',
  'Queued',
  'Broadcasting',
  'Confirmed',
  'Reverted',
  'Failed',
] as const;
export const ExecutionPhaseSchema = z.enum(EXECUTION_PHASES);
export type ExecutionPhase = z.infer<typeof ExecutionPhaseSchema>;
export const TERMINAL_PHASES: ReadonlySet<ExecutionPhase> = new Set(['Confirmed', 'Reverted', 'Failed']);
export const isTerminal = (p: ExecutionPhase | undefined): boolean => p !== undefined && TERMINAL_PHASES.has(p);

/** Condition types on an ExecutionRequest. `Succeeded` is the one-glance summary (Tekton style). */
export const CONDITION = {
  Simulated: 'Simulated',
  PolicyAllowed: 'PolicyAllowed',
  PaymentSatisfied: 'PaymentSatisfied',
  Submitted: 'Submitted',
  Succeeded: 'Succeeded',
} as const;

export const PaymentProofSchema = z.object({
  requestId: z.string().optional(),
  payer: Address,
  token: z.string().regex(/^[A-Za-z0-9]{1,16}$/),
  chain: ChainNameSchema,
  txHash: Hash,
  /**
   * The payer's signature over the proof (src/payments/proofSignature.ts): EIP-191 for an account, ERC-1271 (or an
   * ERC-6492 wrapping of it) for a contract wallet. Optional: it binds the transfer to the request more strongly
   * than its amount does, and is how a transfer made before the quote pays.
   */
  signature: Hex.max(8_194).optional(),
});
export type PaymentProof = z.infer<typeof PaymentProofSchema>;

/**
 * What a request costs its caller and how to pay it (spec §2.8), as quoted when payment was first required: a
 * payment is judged against exactly this while it holds (`expiresAt`); after that a fresh quote is made.
 */
export const PaymentQuoteSchema = z.object({
  /** What the caller pays in USD: gas + platform fee (manual), gas (auto). */
  amountUsd: z.number().min(0),
  gasCostUsd: z.number().min(0),
  feeUsd: z.number().min(0),
  chainId: z.number().int(),
  /** The treasury: the only valid recipient. */
  recipient: Address,
  /**
   * Every accepted token with the raw amount that pays the quote, in the auto mode's order. A quote answered with
   * a 402 has amounts no other open quote has (a few low-order units added, see src/payments/uniqueAmounts.ts):
   * a transfer of exactly that amount can only pay this quote.
   */
  tokens: z.array(z.object({ symbol: z.string(), address: Address, decimals: z.number().int().min(0), amountRaw: UintString })),
  expiresAt: z.string(),
  /** The chain's head when the quote was made: a transfer pays it only from a later block (absent: made before amounts were unique). */
  fromBlock: UintString.optional(),
  /**
   * Until when the quote's amounts are held for it: its expiry plus the grace for a payment on its way. A transfer
   * in a block of a later time does not pay it (the amount may be another quote's by then).
   */
  reservedUntil: z.string().optional(),
});
export type PaymentQuote = z.infer<typeof PaymentQuoteSchema>;

export const PAYMENT_METHODS = ['proof', 'x402', 'auto', 'credit'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/**
 * A payment taken for the request: by a proof of an on-chain transfer, an x402 authorization, the auto transfer, or
 * the credit another request of the same key and agent left (paid, then never executed).
 */
export const PaymentRecordSchema = z.object({
  method: z.enum(PAYMENT_METHODS),
  token: z.string(),
  amountRaw: UintString,
  /** Who paid: the proof's payer, the x402 authorization's signer, or the agent's wallet (auto). */
  payer: Address,
  /** The payment transaction (proof, x402 settlement); auto pays inside the request's own operation. */
  txHash: Hash.optional(),
  /** A proof's transfer: the position in its transaction's logs of the first Transfer log it counted. */
  logIndex: z.number().int().min(0).optional(),
  /** The PaymentReceipt that claims it (single use). */
  receipt: z.string().optional(),
  /** A credit: the request whose payment it was. */
  creditOf: z.string().optional(),
  verifiedTime: z.string().optional(),
});
export type PaymentRecord = z.infer<typeof PaymentRecordSchema>;

/** Why the last payment attached to the request was refused (the request keeps waiting for one). */
export const PaymentRejectionSchema = z.object({
  reason: z.string(),
  message: z.string(),
  /** The same payment may pass later (not mined, or not deep enough, yet). */
  retryable: z.boolean(),
  confirmationsRemaining: z.number().int().min(0).optional(),
  /** The spec generation whose payment this judged: the gateway waits for its own. */
  observedGeneration: z.number().int(),
});
export type PaymentRejection = z.infer<typeof PaymentRejectionSchema>;

export const PaymentStatusSchema = z.object({
  quote: PaymentQuoteSchema.optional(),
  /**
   * The quotes this request had before the current one (newest first, at most 3), kept while their amounts are
   * held: a transfer made for one of them, in its window, still pays the request.
   */
  earlierQuotes: z.array(PaymentQuoteSchema).max(3).optional(),
  /**
   * A request that was paid (proof or x402) and then failed without executing leaves its payment as a credit: it
   * pays one later request of the same key and agent, made before `expiresAt`, that costs no more (`usedBy` names it).
   */
  credit: z.object({ amountUsd: z.number().min(0), expiresAt: z.string(), usedBy: z.string().optional() }).optional(),
  paid: PaymentRecordSchema.optional(),
  rejection: PaymentRejectionSchema.optional(),
});

/**
 * The protocol action a request was made with (`/protocols/<slug>/<path>`), kept beside the calls planned from it:
 * a retry or a paid resend is matched by what the caller asked (`inputHash`), never by calls, which a plan reading
 * changing state (a quote, a price, the time) derives anew each time.
 */
export const ProtocolActionSchema = z.object({
  /** `<slug>/<action path>`, e.g. `lend-c/supply`. */
  name: z.string().regex(/^[a-z0-9-]+\/[a-z0-9/-]+$/).max(128),
  /**
   * The caller's input as the family's schema normalized it, relative bounds (slippage) made absolute by the first
   * plan: what the chain enforces is what the caller was first shown.
   */
  input: z.looseObject({}),
  /** sha256 (hex) of the action's name and the caller's normalized input, before any bound was derived. */
  inputHash: z.string().regex(/^[0-9a-f]{64}$/),
  /**
   * The protocol settles what the action creates later (a GMX order, executed by a keeper after the create is
   * confirmed), and when: `next_price` (a market order: within seconds, so a wait for the request goes on until
   * then) or `at_trigger` (a limit order: whenever the price gets there). Once Confirmed, the request's order is
   * pending until status.order says otherwise.
   */
  followed: z.enum(['next_price', 'at_trigger']).optional(),
});
export type ProtocolAction = z.infer<typeof ProtocolActionSchema>;

export const ExecutionRequestSpecSchema = z.object({
  /** Name of the ApiClient that submitted it: the tenant boundary. */
  apiClient: z.string().min(1),
  agentId: z.string().min(1),
  chain: ChainNameSchema,
  calls: z.array(CallSchema).min(1),
  /** The protocol action these calls were planned from; absent for POST /execute. */
  action: ProtocolActionSchema.optional(),
  /** Whether the caller used the batch shape (`batch_calls`); kept so responses can echo the shape. */
  batch: z.boolean().default(false),
  strategyId: z.string().optional(),
  callbackUrl: z.string().url().optional(),
  /**
   * The key's mode when the request was accepted. A request still waiting for its payment takes a later mode of its
   * key (the controller writes it: controller/execution/keyChange.ts); one past payment keeps the mode it was paid in.
   */
  paymentMode: PaymentModeSchema,
  /** The API client's own platform fee (USD) when it has one, copied at acceptance; else the deployment's. */
  platformFeeUsd: z.number().min(0).optional(),
  /** A payment proof (spec §2.5) the caller attached: the controller verifies it against the quote. */
  paymentProof: PaymentProofSchema.optional(),
  /** An x402 v2 payment the caller attached: its PAYMENT-SIGNATURE header, as sent (base64 JSON). */
  x402Payment: z.string().max(16_384).optional(),
  /**
   * How many times a payment was attached. Each attachment counts, the same payment again too (one that was
   * not deep enough before): the spec changes, so its generation moves and the controller judges it afresh.
   */
  paymentAttempt: z.number().int().min(1).optional(),
  /**
   * When the caller asked to cancel the request (POST /status/:id/cancel). The controller decides: a request not
   * signed yet ends Failed with failure code `cancelled`; one whose operation was signed goes on (the cancel
   * came too late). Only ever set, never cleared.
   */
  cancelRequestedTime: z.string().optional(),
});
export type ExecutionRequestSpec = z.infer<typeof ExecutionRequestSpecSchema>;

/** The signed UserOperation (v0.7, unpacked form), persisted before it is sent so a retry re-sends it. */
export const SignedUserOperationSchema = z.object({
  sender: Address,
  nonce: UintString,
  factory: Address.optional(),
  factoryData: Hex.optional(),
  callData: Hex,
  callGasLimit: UintString,
  verificationGasLimit: UintString,
  preVerificationGas: UintString,
  maxFeePerGas: UintString,
  maxPriorityFeePerGas: UintString,
  paymaster: Address.optional(),
  paymasterVerificationGasLimit: UintString.optional(),
  paymasterPostOpGasLimit: UintString.optional(),
  paymasterData: Hex.optional(),
  signature: Hex,
  /** EntryPoint.getUserOpHash of the operation. */
  hash: Hash,
  entryPoint: Address,
  chainId: z.number().int(),
});
export type SignedUserOperation = z.infer<typeof SignedUserOperationSchema>;

export const FailureSchema = z.object({
  /** Stable machine code, e.g. simulation_reverted, validation_failed, dropped, not_included, key_revoked. */
  code: z.string(),
  message: z.string(),
  /** Index in the batch of the call that failed, when known. */
  callIndex: z.number().int().min(0).optional(),
  revertReason: z.string().optional(),
  revertData: Hex.optional(),
  /** The revert decoded by the protocol family of the request's action (Aave's numeric codes, Comet's errors). */
  protocolError: z.object({ protocol: z.string(), name: z.string(), code: z.string().optional(), message: z.string() }).optional(),
  /** The AgentPolicy that refused it (`policy_denied`, `agent_suspended`), and its rule (none: no rule accepted). */
  policy: z.object({ name: z.string(), rule: z.string().optional(), budget: z.string().optional() }).optional(),
});
export type Failure = z.infer<typeof FailureSchema>;
/** The failure code of a request its caller cancelled before it was signed (spec §3 has no `cancelled` state: `failed`). */
export const CANCELLED_FAILURE = 'cancelled';

/**
 * States of a webhook delivery (the `state` of an event in status.webhookEvents). None yet: its first attempt
 * has not started.
 *   Sending    an attempt was claimed (attempts counts it) and is in flight; found after a crash or a leader
 *              change, it is sent again at once, with the same webhook-id
 *   Retrying   the last attempt failed; the next is due at nextAttemptTime
 *   Delivered  the endpoint answered 2xx (final)
 *   Gone       the endpoint answered 410: never tried again (final)
 *   Abandoned  every attempt of the retry schedule failed (final)
 */
export const WEBHOOK_DELIVERY_STATES = ['Sending', 'Retrying', 'Delivered', 'Gone', 'Abandoned'] as const;
export const WebhookDeliveryStateSchema = z.enum(WEBHOOK_DELIVERY_STATES);
export type WebhookDeliveryState = z.infer<typeof WebhookDeliveryStateSchema>;
const FINAL_DELIVERY_STATES: ReadonlySet<WebhookDeliveryState> = new Set(['Delivered', 'Gone', 'Abandoned']);

const webhookDeliveryFields = {
  /** The webhook-id header and the event's id: the same on every attempt. */
  id: z.string(),
  /** The event type, e.g. execution.confirmed. */
  event: z.string(),
  /** Attempts started, the one in flight included. */
  attempts: z.number().int().min(0),
  firstAttemptTime: z.string().optional(),
  lastAttemptTime: z.string().optional(),
  /** When the next attempt is due (state Retrying). */
  nextAttemptTime: z.string().optional(),
  /** HTTP status of the last answer, when there was one. */
  lastResponseCode: z.number().int().optional(),
  /** Why the last attempt failed: a cause (server_error, throttled, timeout, blocked_address, …) and a message. */
  lastFailure: z.object({ cause: z.string(), message: z.string() }).optional(),
  deliveredTime: z.string().optional(),
};

/**
 * The one delivery of the one event a request had before events were a list (status.webhook). Read only: the
 * webhook controller turns it into the first entry of status.webhookEvents at its next attempt.
 */
export const WebhookDeliverySchema = z.object({ ...webhookDeliveryFields, state: WebhookDeliveryStateSchema });
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

/**
 * One event a request owes its callback URL, and its delivery. An event is recorded in the same status write as
 * the transition it reports (entering a terminal phase, or leaving one when its inclusion left the chain), with
 * its exact body frozen, so every attempt sends the same bytes whatever the request does next. The webhook
 * controller delivers a request's events in order, each at least once, and writes the delivery fields.
 */
export const WebhookEventRecordSchema = z.object({
  ...webhookDeliveryFields,
  /** When the transition happened (the event's `timestamp`). */
  time: z.string(),
  /** The JSON body every attempt sends. */
  body: z.string(),
  /** Absent until the first attempt starts. */
  state: WebhookDeliveryStateSchema.optional(),
});
export type WebhookEventRecord = z.infer<typeof WebhookEventRecordSchema>;

export const isFinalDeliveryState = (s: WebhookDeliveryState | undefined): boolean => s !== undefined && FINAL_DELIVERY_STATES.has(s);

/**
 * Whether a webhook is still owed for this request: it has a callback URL, and one of its events has not reached
 * a final delivery state (or has not started). A request recorded before events were a list owes its one event
 * once terminal, until status.webhook is final. Retention keeps such a request until nothing is owed.
 */
export function webhookOwed(r: ExecutionRequest): boolean {
  if (r.spec.callbackUrl === undefined) return false;
  const events = r.status?.webhookEvents;
  if (events !== undefined && events.length > 0) return events.some((e) => !isFinalDeliveryState(e.state));
  return isTerminal(r.status?.phase) && !isFinalDeliveryState(r.status?.webhook?.state);
}

/**
 * A change of a finished request's inclusion, found when its transaction was looked for again (after a restart,
 * a chain that lost blocks, a reset):
 *   Moved  the same operation is included elsewhere (the chain re-mined it): the status follows it
 *   Lost   its inclusion is gone from the chain: sent again (Broadcasting), or failed when it can no longer be
 */
export const InclusionChangeSchema = z.object({
  kind: z.enum(['Moved', 'Lost']),
  /** The inclusion the status had recorded. */
  txHash: Hash,
  blockNumber: z.string(),
  blockHash: Hash.optional(),
  /** Where it is now (Moved). */
  newTxHash: Hash.optional(),
  newBlockNumber: z.string().optional(),
  newBlockHash: Hash.optional(),
  /** The phase the request had when the change was found. */
  phase: ExecutionPhaseSchema,
  time: z.string(),
});
export type InclusionChange = z.infer<typeof InclusionChangeSchema>;
/** The newest changes a request keeps (older ones are dropped: a request cannot grow without bound). */
export const MAX_INCLUSION_CHANGES = 10;

/**
 * What became of an order the request's operation created, when its protocol settles orders later (a GMX order,
 * deposit or withdrawal, which a keeper executes or cancels after the create is confirmed): followed by the order controller, so the
 * request's phase stays Confirmed (the create is) and the outcome is told here, in its own webhook events.
 */
export const ProtocolOrderSchema = z.object({
  /** The protocol's id of the order (GMX: its order, deposit or withdrawal key). */
  key: Hash,
  /** Pending until a keeper acts; Frozen may still be executed or cancelled later, the other two are final. */
  state: z.enum(['Pending', 'Executed', 'Cancelled', 'Frozen']),
  /** When it entered that state (found on chain: the including block's time is not read). */
  time: z.string(),
  /** The price it executed at, as the family presents it (GMX: USD per index token, decimal). */
  fillPrice: z.string().optional(),
  /** Why it was cancelled or frozen, as the protocol says it (GMX: the error's name). */
  reason: z.string().optional(),
  /** The keeper's transaction that settled it. */
  txHash: Hash.optional(),
  blockNumber: z.string().optional(),
});
export type ProtocolOrder = z.infer<typeof ProtocolOrderSchema>;
export type ProtocolOrderState = ProtocolOrder['state'];
/** A state the order controller stops following at. */
export const isFinalOrderState = (s: ProtocolOrderState | undefined): boolean => s === 'Executed' || s === 'Cancelled';

/** One transition of a request's phase: where it went, and when (status.history). */
export const PhaseTransitionSchema = z.object({ phase: ExecutionPhaseSchema, time: z.string() });
export type PhaseTransition = z.infer<typeof PhaseTransitionSchema>;
/**
 * The newest transitions a request keeps: a normal life has at most six (pending → … → confirmed); more come only
 * from an inclusion lost and sent again. Older ones are dropped, so a request cannot grow without bound.
 */
export const MAX_PHASE_HISTORY = 16;

/**
 * What a request holds of its key's and agent's budgets (docs/policies.md "Budgets"), written before it is signed
 * or asks for a payment. It counts in every budget window it falls in from `at`: `microUsd` until it is included,
 * then its actual cost (actualGasCostWei at `nativeUsdMicro` plus `outflowsMicroUsd`); nothing once it failed unsigned.
 */
export const SpendReservationSchema = z.object({
  at: z.string(),
  /** The most it can cost, in micro-USD: gas at the maximum fee and limits, plus its outflows. */
  microUsd: z.string().regex(/^[0-9]{1,30}$/),
  /** What leaves the wallet, valued at admission, in micro-USD (part of microUsd). */
  outflowsMicroUsd: z.string().regex(/^[0-9]{1,30}$/),
  /** The native coin's price the gas was valued at, in micro-USD per coin. */
  nativeUsdMicro: z.string().regex(/^[0-9]{1,30}$/),
  /** Retention keeps the request until then: its spend leaves the longest window that counted it. */
  until: z.string(),
});
export type SpendReservation = z.infer<typeof SpendReservationSchema>;

export const ExecutionRequestStatusSchema = z.object({
  phase: ExecutionPhaseSchema.optional(),
  observedGeneration: z.number().int().optional(),
  conditions: z.array(ConditionSchema).optional(),
  smartWalletAddress: Address.optional(),
  estimatedGas: z.number().int().optional(),
  /** On an L2: the part of estimatedGas that pays the chain's L1 data fee (src/chain/l1DataFee.ts). */
  l1DataGas: z.number().int().optional(),
  estimatedCostUsd: z.number().optional(),
  /** The quote the request is held to, and how it was paid (manual and auto modes; see src/payments). */
  payment: PaymentStatusSchema.optional(),
  /**
   * The calls signed, when they are not spec.calls: a protocol action whose family plans again at signing
   * (ActionEndpoint.replan), within the bounds spec.action holds.
   */
  signedCalls: z.array(CallSchema).min(1).optional(),
  userOperation: SignedUserOperationSchema.optional(),
  /** Submissions of the same signed operation to the bundler (retries re-send, never re-sign). */
  submitAttempts: z.number().int().optional(),
  txHash: Hash.optional(),
  blockNumber: z.string().optional(),
  /** The block that included txHash: a reorg that removes the inclusion changes the block at blockNumber. */
  blockHash: Hash.optional(),
  gasUsed: z.string().optional(),
  actualGasCostWei: z.string().optional(),
  /** What the caller paid in USD (0 under sponsorship); spec §2.3 `cost_usd`. */
  costUsd: z.number().optional(),
  /** What it holds of its budgets (SpendReservationSchema); absent when no budget applied. */
  spend: SpendReservationSchema.optional(),
  failure: FailureSchema.optional(),
  queuedTime: z.string().optional(),
  startTime: z.string().optional(),
  completionTime: z.string().optional(),
  /**
   * The phase transitions, oldest first (at most MAX_PHASE_HISTORY, the newest kept), each written in the status
   * write that made it: where the request's time went. Absent on requests written before it was kept.
   */
  history: z.array(PhaseTransitionSchema).max(MAX_PHASE_HISTORY).optional(),
  /** The order its operation created, for an action whose protocol settles orders later (ActionEndpoint.follow). */
  order: ProtocolOrderSchema.optional(),
  /** Changes of the request's inclusion found after it finished, oldest first (at most MAX_INCLUSION_CHANGES). */
  inclusionChanges: z.array(InclusionChangeSchema).optional(),
  /**
   * The events owed to spec.callbackUrl, in order: appended with the transition they report, delivered (and
   * their delivery fields written) by the webhook controller.
   */
  webhookEvents: z.array(WebhookEventRecordSchema).optional(),
  /** Deprecated: the one delivery of a request recorded before events were a list (see WebhookDeliverySchema). */
  webhook: WebhookDeliverySchema.optional(),
});
export type ExecutionRequestStatus = z.infer<typeof ExecutionRequestStatusSchema>;

export const ExecutionRequestSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('ExecutionRequest'),
  metadata: ObjectMetaSchema,
  spec: ExecutionRequestSpecSchema,
  status: ExecutionRequestStatusSchema.optional(),
});
export type ExecutionRequest = z.infer<typeof ExecutionRequestSchema>;
