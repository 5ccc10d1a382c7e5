import { isStoreError } from '../store/types.ts';

export interface RetryOnConflictOptions {
  /** Attempts in all, the first included (default 5, as client-go's DefaultRetry). */
  attempts?: number;
  /** Pause between attempts, jittered by up to +10% (default 10 ms). */
  delayMs?: number;
}

/**
 * Runs `fn` again when it fails with a StoreError Conflict: `fn` must read the object afresh each time
 * and re-apply its change to what it read. Other errors, and the last Conflict, are thrown.
 *
 * @example
 * await retryOnConflict(async () => {
 *   const obj = await store.get('ExecutionRequest', name);
 *   return store.updateStatus({ ...obj, status: { ...obj.status, phase: 'Queued' } });
 * });
 */
export async function retryOnConflict<T>(fn: () => Promise<T>, opts: RetryOnConflictOptions = {}): Promise<T> {
  const attempts = Math.max(1, opts.attempts ?? 5);
  const delayMs = opts.delayMs ?? 10;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (!isStoreError(e, 'Conflict') || attempt >= attempts) throw e;
    }
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs * (1 + Math.random() * 0.1)));
  }
}
