import type { ExecutionPhase } from '../../api/v1alpha1/index.ts';

/** Spec §3 status names for the resource's phases; a request with no phase yet is `pending`. */
export const STATUS_OF_PHASE: Readonly<Record<ExecutionPhase, string>> = {
  Pending: 'pending',
  PaymentRequired: 'payment_required',
  PaymentVerified: 'payment_verified',
  Queued: 'queued',
  Broadcasting: 'broadcasting',
  Confirmed: 'confirmed',
  Reverted: 'reverted',
  Failed: 'failed',
};

export const statusOfPhase = (phase: ExecutionPhase | undefined): string => STATUS_OF_PHASE[phase ?? 'Pending'];
