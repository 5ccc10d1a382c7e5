import { GROUP } from './meta.ts';

/** Labels the service sets so lists can be selected server-side (values must be valid label values). */
export const LABELS = {
  apiClient: `${GROUP}/api-client`,
  chain: `${GROUP}/chain`,
  /** sha256(agent id) truncated: agent ids are free text and label values are not. */
  agentHash: `${GROUP}/agent-hash`,
} as const;

/** Annotations the gateway sets on an ExecutionRequest when it accepts it. */
export const ANNOTATIONS = {
  /**
   * A time-sortable acceptance id (a ULID, monotonic within a gateway process): the controller signs a wallet's
   * operations in this order. Request names derived from an Idempotency-Key are not time-sortable, so the order
   * cannot be read from the name.
   */
  accepted: `${GROUP}/accepted`,
  /** sha256 of the canonical request, so a retry with the same Idempotency-Key can be compared with the first. */
  idempotencyBodyHash: `${GROUP}/idempotency-body-sha256`,
} as const;
