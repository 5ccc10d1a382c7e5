import { ApiException } from '@kubernetes/client-node';
import { z } from 'zod';
import { StoreError, type StoreErrorCode } from '../types.ts';

/** metav1.Status, as the API server answers every failed request and ends a watch with (ERROR events). */
export const StatusSchema = z.object({
  kind: z.literal('Status').optional(),
  status: z.string().optional(),
  message: z.string().optional(),
  reason: z.string().optional(),
  code: z.number().int().optional(),
  details: z
    .object({ name: z.string().optional(), kind: z.string().optional(), group: z.string().optional() })
    .passthrough()
    .optional(),
});
export type Status = z.infer<typeof StatusSchema>;

/** What a request was about, for messages and for telling a missing object from a missing API. */
export interface RequestContext {
  verb: string;
  what: string;
}

/**
 * The StoreError for an HTTP status and its Status body. Callers branch on NotFound, AlreadyExists,
 * Conflict and Gone; everything they can only retry (5xx, 429, 401/403 until RBAC is fixed, a missing CRD)
 * is Unavailable.
 */
export function storeErrorFromStatus(httpCode: number, status: Status | undefined, ctx: RequestContext, cause?: unknown): StoreError {
  const message = status?.message ?? `HTTP ${httpCode}`;
  const text = `${ctx.verb} ${ctx.what}: ${message}`;
  const details = { httpCode, ...(status?.reason !== undefined && { reason: status.reason }) };
  const err = (code: StoreErrorCode) => new StoreError(code, text, { details, ...(cause !== undefined && { cause }) });
  switch (httpCode) {
    case 404:
      // An object (or its namespace) that does not exist names itself in details; a resource type the server
      // does not serve (CRDs not installed) does not, and must not read as "the object is gone".
      return status?.details?.name !== undefined
        ? err('NotFound')
        : new StoreError('Unavailable', `${text} (is the CRD installed?)`, { details, ...(cause !== undefined && { cause }) });
    case 409:
      return err(status?.reason === 'AlreadyExists' ? 'AlreadyExists' : 'Conflict');
    case 410:
      return err('Gone');
    case 400:
    case 422:
      return err('Invalid');
    default:
      return err('Unavailable');
  }
}

/** Maps whatever a client-node call threw (ApiException, or a network/abort error) to a StoreError. */
export function toStoreError(e: unknown, ctx: RequestContext): StoreError {
  if (e instanceof StoreError) return e;
  if (e instanceof ApiException) {
    return storeErrorFromStatus(e.code, parseStatus(e.body), ctx, e);
  }
  // Connection refused or reset, DNS, TLS, our own deadline: nothing the caller can do but retry.
  const reason = (e as { name?: string })?.name === 'AbortError' ? 'request timed out' : describe(e);
  return new StoreError('Unavailable', `${ctx.verb} ${ctx.what}: ${reason}`, { cause: e });
}

/** A Status from a response body (JSON text or already parsed); undefined if it is not one. */
export function parseStatus(body: unknown): Status | undefined {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  const parsed = StatusSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

function describe(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${e.message}` : e.message;
  }
  return String(e);
}
