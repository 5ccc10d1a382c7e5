/**
 * `read` with single-flight and a short cache: callers at the same moment share one read, and its answer is
 * reused for `maxAgeMs` (a failed read is not cached: the next caller reads again).
 */
export function cachedRead<T>(read: () => Promise<T>, maxAgeMs: number): () => Promise<T> {
  let cached: { at: number; value: T } | undefined;
  let inflight: Promise<T> | undefined;
  return async () => {
    if (cached && Date.now() - cached.at <= maxAgeMs) return cached.value;
    inflight ??= read()
      .then((value) => {
        cached = { at: Date.now(), value };
        return value;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };
}
