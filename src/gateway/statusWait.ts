import { presentStatus } from '../api/http/presentStatus.ts';
import { isSettled, type RequestStatus, type StatusRecord } from '../api/http/index.ts';
import type { ExecutionRequest } from '../api/v1alpha1/index.ts';
import type { ExecutionInformer } from './executionInformer.ts';
import { statusEtag } from './statusEtag.ts';

/**
 * The long poll of `GET /status/:id` (`?wait=N`, `Prefer: wait=N`): hold the answer until the record differs
 * from the one the caller knows. Served from the gateway's informer (one shared watch of the namespace's
 * requests, in both layouts), never by reading the store again: a confirmation is answered as soon as the
 * watch delivers it.
 */

/** What the caller says it has seen: a status (`known_status`), entity tags (`If-None-Match`), or both. */
export interface KnownState {
  status?: RequestStatus | undefined;
  etags?: readonly string[] | '*' | undefined;
}

export const namesKnownState = (known: KnownState): boolean => known.status !== undefined || known.etags !== undefined;

/** Whether `record` is still what the caller knows (every hint it gave matches; `*` matches any record). */
export function isKnown(record: StatusRecord, known: KnownState): boolean {
  if (known.status !== undefined && record.status !== known.status) return false;
  if (known.etags !== undefined && known.etags !== '*' && !known.etags.includes(statusEtag(record))) return false;
  return true;
}

/**
 * A wait has nothing to wait for: the record is settled (terminal, with no order a keeper has yet to settle), or
 * already other than the one the caller knows.
 */
export const answersAtOnce = (record: StatusRecord, known: KnownState): boolean => isSettled(record) || !isKnown(record, known);

export type WaitEnd =
  /** The record the caller should see now: changed, or as it is when the time ran out. */
  | { kind: 'answer'; request: ExecutionRequest }
  /** The resource left the store (archived after its retention, or deleted by an operator). */
  | { kind: 'deleted' }
  /** The caller went away: nothing to answer. */
  | { kind: 'aborted' };

/**
 * Resolves when `name`'s record is no longer what the caller knows (or is terminal), when it is deleted, after
 * `timeoutMs` (with the record as it is then), or when `signal` aborts. Every path unsubscribes and clears its
 * timer: an abandoned wait leaves nothing behind.
 *
 * `initial` is the newest record the caller's gateway has seen. When it came from the store because the cache was
 * behind (`fromStore`), the cache's next deliveries are older states still: they are passed over until the cache
 * holds `initial`'s resourceVersion, so a wait never answers with a state older than one already seen (should a
 * relist skip that version, the wait ends at its time with `initial`, and the caller asks again).
 */
export function waitForStatusChange(
  informer: ExecutionInformer,
  name: string,
  initial: ExecutionRequest,
  known: KnownState,
  timeoutMs: number,
  signal: AbortSignal,
  fromStore = false,
): Promise<WaitEnd> {
  return new Promise<WaitEnd>((resolve) => {
    let settled = false;
    let behind = fromStore && informer.get(name)?.metadata.resourceVersion !== initial.metadata.resourceVersion;
    const finish = (end: WaitEnd): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      unsubscribe();
      signal.removeEventListener('abort', onAbort);
      resolve(end);
    };
    const consider = (obj: ExecutionRequest | undefined): void => {
      if (obj === undefined) return finish({ kind: 'deleted' });
      if (behind) {
        if (obj.metadata.resourceVersion !== initial.metadata.resourceVersion) return;
        behind = false; // caught up: what it delivers from now on is newer than `initial`
      }
      if (answersAtOnce(presentStatus(obj), known)) finish({ kind: 'answer', request: obj });
    };
    const onAbort = (): void => finish({ kind: 'aborted' });
    const timer = setTimeout(() => finish({ kind: 'answer', request: behind ? initial : (informer.get(name) ?? initial) }), timeoutMs);
    // Subscribe before looking again, so a change between the caller's look and this one cannot be missed.
    const unsubscribe = informer.subscribe(name, consider);
    signal.addEventListener('abort', onAbort);
    if (signal.aborted) return onAbort();
    const now = informer.get(name);
    if (now !== undefined && !behind) consider(now);
  });
}
