import { createHash } from 'node:crypto';
import {
  agentHash,
  agentInScope,
  type AgentScope,
  ANNOTATIONS,
  API_VERSION,
  idempotentRequestId,
  LABELS,
  newRequestId,
  type ExecutionRequest,
  type ExecutionRequestSpec,
} from '../../api/v1alpha1/index.ts';
import { isStoreError, type ResourceStore } from '../../store/types.ts';
import { GatewayError } from '../errors.ts';
import { inSpan, traceAnnotations, TRACERS } from '../../lib/tracing.ts';

/**
 * sha256 of what the caller asked, without any payment: what an Idempotency-Key retry is compared with, and how
 * a re-submission with a payment finds the request that asked for it. A protocol action is its action (name and
 * normalized input), never the calls planned from it: a plan that reads changing state derives other calls on a
 * retry. POST /execute's calls are the caller's own.
 */
export function requestBodyHash(spec: ExecutionRequestSpec): string {
  if (spec.action === undefined) return callsHash(spec);
  const canonical = JSON.stringify({
    agentId: spec.agentId,
    chain: spec.chain,
    action: spec.action.name,
    input: spec.action.inputHash,
    strategyId: spec.strategyId ?? null,
    callbackUrl: spec.callbackUrl ?? null,
  });
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/** The hash of a request's calls: every request's before actions were recorded, and POST /execute's still. */
function callsHash(spec: ExecutionRequestSpec): string {
  const canonical = JSON.stringify({
    agentId: spec.agentId,
    chain: spec.chain,
    batch: spec.batch,
    calls: spec.calls.map((c) => ({ target: c.target, value: c.value, data: c.data })),
    strategyId: spec.strategyId ?? null,
    callbackUrl: spec.callbackUrl ?? null,
  });
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/**
 * Whether `existing` (annotated with its hash when it was created) is the request `spec` asks for again. One made
 * before actions were recorded carries the hash of its calls: a retry of it is matched by calls, as it was then
 * (lending's calls depend on the input alone).
 */
export function isSameRequest(existing: ExecutionRequest, spec: ExecutionRequestSpec): boolean {
  const recorded = existing.metadata.annotations?.[ANNOTATIONS.idempotencyBodyHash];
  if (existing.spec.apiClient !== spec.apiClient || existing.spec.agentId !== spec.agentId) return false;
  if (recorded === requestBodyHash(spec)) return true;
  return existing.spec.action === undefined && spec.action !== undefined && recorded === callsHash(spec);
}

export interface CreatedOrReplayed {
  request: ExecutionRequest;
  /** True when an earlier attempt with the same Idempotency-Key created it: the answer replays that request. */
  replayed: boolean;
}

/**
 * Creates the ExecutionRequest, or with an Idempotency-Key finds the one a previous attempt created: the name
 * is derived from (client, key), so of two concurrent attempts exactly one create succeeds and the other
 * reads the winner. Retries a few times in case the winner is deleted in between.
 */
export async function createOrReplay(
  store: ResourceStore,
  namespace: string,
  spec: ExecutionRequestSpec,
  idempotencyKey: string | undefined,
  /** The caller's agent scope: a request of an agent outside it is never named to the caller. */
  scope?: AgentScope | undefined,
): Promise<CreatedOrReplayed> {
  const bodyHash = requestBodyHash(spec);
  for (let attempt = 0; ; attempt++) {
    // The controller signs a wallet's operations in acceptance order, read from this annotation: it must sort
    // by time for every request, including those whose name is derived from an Idempotency-Key.
    const accepted = newRequestId();
    const name = idempotencyKey === undefined ? accepted : idempotentRequestId(spec.apiClient, idempotencyKey);
    const fresh: ExecutionRequest = {
      apiVersion: API_VERSION,
      kind: 'ExecutionRequest',
      metadata: {
        name,
        namespace,
        labels: {
          [LABELS.apiClient]: spec.apiClient,
          [LABELS.chain]: spec.chain,
          [LABELS.agentHash]: agentHash(spec.agentId),
        },
        // With tracing on, the request carries its trace to the controller (src/lib/tracing.ts).
        annotations: { [ANNOTATIONS.accepted]: accepted, [ANNOTATIONS.idempotencyBodyHash]: bodyHash, ...traceAnnotations() },
      },
      spec,
    };
    try {
      return { request: await inSpan(TRACERS.gateway, 'store.create', () => store.create(fresh)), replayed: false };
    } catch (e) {
      if (idempotencyKey === undefined || !isStoreError(e, 'AlreadyExists') || attempt >= 2) throw e;
    }
    let existing: ExecutionRequest;
    try {
      existing = await store.get('ExecutionRequest', name, namespace);
    } catch (e) {
      if (isStoreError(e, 'NotFound')) continue; // deleted between our create and get: try again
      throw e;
    }
    if (!isSameRequest(existing, spec)) {
      // A request of an agent the key may no longer act for (its scope was narrowed) is not named.
      const named = agentInScope(scope, existing.spec.agentId);
      throw new GatewayError(
        422,
        'idempotency_key_mismatch',
        'this Idempotency-Key was already used with a different request body; use a new key for a new request',
        named ? { details: { request_id: name } } : {},
      );
    }
    return { request: existing, replayed: true };
  }
}
