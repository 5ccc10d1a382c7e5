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
  PaymentSatisfied: 'PaymentSatisfied',
  Submitted: 'Submitted',
  Succeeded: 'Succeeded',
} as const;

export const PaymentProofSchema = z.object({
  requestId: z.string().optional(),
  payer: Address,
  token: z.string(),
  chain: ChainNameSchema,
  txHash: Hash,
});
export type PaymentProof = z.infer<typeof PaymentProofSchema>;

export const ExecutionRequestSpecSchema = z.object({
  /** Name of the ApiClient that submitted it: the tenant boundary. */
  apiClient: z.string().min(1),
  agentId: z.string().min(1),
  chain: ChainNameSchema,
  calls: z.array(CallSchema).min(1),
  /** Whether the caller used the batch shape (`batch_calls`); kept so responses can echo the shape. */
  batch: z.boolean().default(false),
  strategyId: z.string().optional(),
  callbackUrl: z.string().url().optional(),
  /** The key's mode when the request was accepted; a later mode change does not alter a request in flight. */
  paymentMode: PaymentModeSchema,
  paymentProof: PaymentProofSchema.optional(),
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
  /** Stable machine code, e.g. simulation_reverted, validation_failed, dropped, not_included. */
  code: z.string(),
  message: z.string(),
  /** Index in the batch of the call that failed, when known. */
  callIndex: z.number().int().min(0).optional(),
  revertReason: z.string().optional(),
  revertData: Hex.optional(),
});
export type Failure = z.infer<typeof FailureSchema>;

export const ExecutionRequestStatusSchema = z.object({
  phase: ExecutionPhaseSchema.optional(),
  observedGeneration: z.number().int().optional(),
  conditions: z.array(ConditionSchema).optional(),
  smartWalletAddress: Address.optional(),
  estimatedGas: z.number().int().optional(),
  estimatedCostUsd: z.number().optional(),
  /** Payment quote and settlement: filled by the payments controller (manual / auto modes). */
  payment: z
    .object({ amountUsd: z.number(), settledBy: z.string().optional(), receipt: z.string().optional() })
    .optional(),
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
  failure: FailureSchema.optional(),
  queuedTime: z.string().optional(),
  startTime: z.string().optional(),
  completionTime: z.string().optional(),
  /** Webhook delivery state: filled by the webhook controller. */
  webhook: z
    .object({ state: z.string(), attempts: z.number().int(), lastAttemptTime: z.string().optional() })
    .optional(),
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
