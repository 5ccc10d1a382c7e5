
/** Small helpers for the controller runtime's tests and those of what is built on it. */

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Resolves when `pred` holds, polling every 2 ms; fails the test after `timeoutMs`. */
export async function until(pred: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(2);
  }
}

/** A Logger that drops everything: for tests that provoke errors on purpose. */
export { silentLogger as quiet } from '../../lib/logger.ts';
