/**
 * Open status waits per API key, bounded: a wait holds a connection and a subscription for up to 30 s, so one
 * key cannot hold the gateway's connections with them. Counted per gateway process (each replica bounds its own).
 */
export interface WaitSlots {
  /** Open waits allowed per key. */
  readonly max: number;
  /** A slot for `key`, or undefined when it has `max` open already; call the returned function once to free it. */
  acquire(key: string): (() => void) | undefined;
  /** Open waits of `key` (for the operator's view and tests). */
  open(key: string): number;
}

export function createWaitSlots(max: number): WaitSlots {
  const open = new Map<string, number>();
  return {
    max,
    acquire(key) {
      const n = open.get(key) ?? 0;
      if (n >= max) return undefined;
      open.set(key, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (open.get(key) ?? 1) - 1;
        if (left <= 0) open.delete(key);
        else open.set(key, left);
      };
    },
    open: (key) => open.get(key) ?? 0,
  };
}
