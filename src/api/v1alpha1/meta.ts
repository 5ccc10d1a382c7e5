import { z } from 'zod';
import { DEFAULT_NAMESPACE } from './names.ts';

export const GROUP = 'agentwallet.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}` as const;

/** The subset of Kubernetes ObjectMeta the service uses; same names and meaning as the API server's. */
export const ObjectMetaSchema = z.object({
  name: z.string().min(1).max(253),
  namespace: z.string().min(1).default(DEFAULT_NAMESPACE),
  uid: z.string().optional(),
  /** Opaque to clients; the store's revision of the object's last write. */
  resourceVersion: z.string().optional(),
  /** Incremented by the store on every spec change; status writes leave it alone. */
  generation: z.number().int().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  finalizers: z.array(z.string()).optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMetaSchema>;

/** metav1.Condition. `reason` is CamelCase; `status` is the string tri-state, as in Kubernetes. */
export const ConditionSchema = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string().default(''),
  lastTransitionTime: z.string(),
  observedGeneration: z.number().int().optional(),
});
export type Condition = z.infer<typeof ConditionSchema>;

/** Sets a condition in place semantics-wise: lastTransitionTime changes only when status changes. */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: string },
  now: Date = new Date(),
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === next.type);
  const prev = i >= 0 ? list[i] : undefined;
  const lastTransitionTime =
    prev && prev.status === next.status ? prev.lastTransitionTime : (next.lastTransitionTime ?? now.toISOString());
  const merged: Condition = { ...next, message: next.message ?? '', lastTransitionTime };
  if (i >= 0) list[i] = merged;
  else list.push(merged);
  return list;
}

export const KINDS = ['ExecutionRequest', 'ApiClient', 'PaymentReceipt', 'AgentPolicy'] as const;
export type Kind = (typeof KINDS)[number];
