/**
 * Keeps a chain's journaled calls (cheat calls and transaction sends) and its snapshot dumps apart, so that a
 * snapshot is wholly before or wholly after each of them and its mark splits them exactly. anvil's dump is not
 * atomic with mining: a send mined while it runs can leave its effects in the dumped state (the sender's nonce
 * moved) without its block, so a replay could neither find the transaction nor send it again.
 *
 * Journaled calls run concurrently with each other. A dump waits for a moment with none in flight; while it waits,
 * new calls are held back for at most HOLD_MS, so a steady stream cannot starve it. Not longer: a call in flight may
 * be waiting on one that is held (with automine off, an `eth_sendRawTransactionSync` returns only once an
 * `evm_mine` comes), and holding that one would deadlock until anvil's timeout. Then the calls go on, and the dump
 * waits for the next quiet moment.
 */
export interface WriteGate {
  /** Runs `write` once no dump is running (or about to run). */
  write<T>(write: () => Promise<T>): Promise<T>;
  /** Runs `dump` with no write in flight; writes that arrive meanwhile wait for it. One dump at a time. */
  exclusive<T>(dump: () => Promise<T>): Promise<T>;
}

/** How long new calls are held back while a dump waits for the ones in flight to finish. */
export const HOLD_MS = 250;

export function writeGate(opts: { holdMs?: number } = {}): WriteGate {
  const holdMs = opts.holdMs ?? HOLD_MS;
  let writes = 0;
  /** Settles when the dump running, or the hold before one, ends. */
  let blocked: Promise<unknown> | undefined;
  let idle: Array<() => void> = [];
  const quiet = (): Promise<void> => new Promise<void>((resolve) => idle.push(resolve));

  return {
    async write<T>(write: () => Promise<T>): Promise<T> {
      while (blocked) await blocked.catch(() => undefined);
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
        while (blocked) await blocked.catch(() => undefined);
        if (writes === 0) break;
        // Hold new calls back while those in flight finish, for a bounded time.
        let release!: () => void;
        blocked = new Promise<void>((resolve) => (release = resolve));
        let timer: NodeJS.Timeout | undefined;
        const drained = await Promise.race([quiet().then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), holdMs)))]);
        clearTimeout(timer);
        if (drained && writes === 0) {
          // Still holding: the dump starts before any held call can.
          const running = dump();
          const done = running.finally(() => {
            blocked = undefined;
            release();
          });
          blocked = done;
          return running;
        }
        blocked = undefined;
        release();
        if (writes > 0) await quiet(); // let them go on; look again at the next quiet moment
      }
      const running = dump();
      blocked = running.finally(() => undefined);
      try {
        return await running;
      } finally {
        blocked = undefined;
      }
    },
  };
}
