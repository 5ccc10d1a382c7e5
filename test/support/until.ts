/**
 * Polls `fn` until it returns something other than undefined, and returns that; throws "timed out waiting for
 * <what>" after `timeoutMs`. For what a test waits on without an event to subscribe to (a leader, a delivery).
 */
export async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
