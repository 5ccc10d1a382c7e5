/**
 * Keeps a chain's cheat calls (journaled `write`s) and its snapshot dumps apart, so that a snapshot's mark
 * splits the writes exactly: each one is wholly before the dump or wholly after it. Writes run concurrently
 * with each other. A dump waits for a moment with none in flight and does not hold newer ones back meanwhile:
 * a write may wait on another (an `evm_mine` is what lets a pending `eth_sendTransactionSync` return), so
 * holding them could deadlock until anvil's timeout. Under a gapless stream of writes a dump waits.
 */
export interface WriteGate {
  /** Runs `write` once no dump is running. */
  write<T>(write: () => Promise<T>): Promise<T>;
  /** Runs `dump` with no write in flight; writes that arrive meanwhile wait for it. One dump at a time. */
  exclusive<T>(dump: () => Promise<T>): Promise<T>;
}

export function writeGate(): WriteGate {
  let writes = 0;
  let dumping: Promise<unknown> | undefined;
  let idle: Array<() => void> = [];

  return {
    async write<T>(write: () => Promise<T>): Promise<T> {
      while (dumping) await dumping.catch(() => undefined);
      writes++;
      try {
        return await write();
      } finally {
        if (--writes === 0) {
          const waiting = idle;
          idle = [];
          for (const wake of waiting) wake();
        }
      }
    },
    async exclusive<T>(dump: () => Promise<T>): Promise<T> {
      for (;;) {
        while (dumping) await dumping.catch(() => undefined);
        if (writes > 0) await new Promise<void>((resolve) => idle.push(resolve));
        // Re-checked after every wait: a write or another dump may have started in between.
        if (writes === 0 && !dumping) break;
      }
      const running = dump();
      dumping = running;
      try {
        return await running;
      } finally {
        dumping = undefined;
      }
    },
  };
}
