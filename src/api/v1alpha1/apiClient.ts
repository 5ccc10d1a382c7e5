import { z } from 'zod';
import { API_VERSION, ObjectMetaSchema } from './meta.ts';
import { PaymentModeSchema } from './executionRequest.ts';

/**
 * An API key's tenant. The key itself is never stored: only sha256 of its secret part. The resource name is
 * the key id (the part of the key before the secret), so a lookup is a get by name, then a constant-time
 * compare. Rotation replaces the hash and keeps the name, so an agent's wallets survive rotation.
 */
/** A key's limits unless the operator sets others. */
export const DEFAULT_KEY_LIMITS = { requestsPerSecond: 50, burst: 100, maxBatchCalls: 20 } as const;

/**
 * Which secrets sign this client's webhooks: references only (a file of the data directory, or a Secret in a
 * cluster; see src/webhooks/secrets), never a secret itself. `previous` is the secret a rotation replaced: it
 * keeps signing too, as a second signature, until `validUntil`, so receivers can switch secrets without
 * missing an event.
 */
export const WebhookSigningSchema = z.object({
  current: z.object({ secretRef: z.string().min(1), createdAt: z.string() }),
  previous: z.object({ secretRef: z.string().min(1), createdAt: z.string(), validUntil: z.string() }).optional(),
});
export type WebhookSigning = z.infer<typeof WebhookSigningSchema>;

/**
 * The agent ids a key may act for (its wallets are derived from them): one exact id, or every id with a prefix.
 * Absent: any agent id, as before. An operator sets it; the key itself cannot change it (docs/policies.md).
 */
export const AgentScopeSchema = z.object({
  match: z.enum(['exact', 'prefix']),
  /** The agent id, or the prefix every agent id of the key starts with (case-sensitive, as agent ids are). */
  agentId: z.string().min(1).max(256),
});
export type AgentScope = z.infer<typeof AgentScopeSchema>;

/** Whether `scope` (a key's, or a policy's) covers `agentId` (no scope: any). Case-sensitive, as agent ids are. */
export function agentInScope(scope: AgentScope | undefined, agentId: string): boolean {
  if (scope === undefined) return true;
  return scope.match === 'exact' ? agentId === scope.agentId : agentId.startsWith(scope.agentId);
}

export const ApiClientSpecSchema = z.object({
  displayName: z.string().optional(),
  keyHash: z.string().regex(/^[0-9a-f]{64}$/),
  paymentMode: PaymentModeSchema,
  /** The platform fee (USD per execution, manual mode) of this client, instead of the deployment's. */
  platformFeeUsd: z.number().min(0).optional(),
  enabled: z.boolean().default(true),
  limits: z
    .object({
      /** Sustained requests per second per key on protected endpoints (token bucket). */
      requestsPerSecond: z.number().positive().default(DEFAULT_KEY_LIMITS.requestsPerSecond),
      burst: z.number().int().positive().default(DEFAULT_KEY_LIMITS.burst),
      maxBatchCalls: z.number().int().positive().default(DEFAULT_KEY_LIMITS.maxBatchCalls),
    })
    .default(DEFAULT_KEY_LIMITS),
  webhookSigning: WebhookSigningSchema.optional(),
  agentScope: AgentScopeSchema.optional(),
});
export type ApiClientSpec = z.infer<typeof ApiClientSpecSchema>;

export const ApiClientSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal('ApiClient'),
  metadata: ObjectMetaSchema,
  spec: ApiClientSpecSchema,
  status: z.object({ rotatedAt: z.string().optional(), revokedAt: z.string().optional() }).optional(),
});
export type ApiClient = z.infer<typeof ApiClientSchema>;
