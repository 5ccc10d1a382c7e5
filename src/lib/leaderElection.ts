/**
 * Leader election, the contract: of the replicas of a controller, only the leader reconciles. The cluster mode
 * elects through a coordination.k8s.io Lease (src/store/kube/lease.ts); the embedded mode is one process and
 * always leads (alwaysLeader below). It lives in lib because both the store (which implements it) and the
 * controller manager (which runs under it) depend on it.
 */

export interface LeaderCallbacks {
  /**
   * Called when this replica becomes the leader: start reconciling and return (the returned promise is the
   * start, not the leadership). `signal` aborts when leadership ends; a start still in progress then must
   * give up, or check the signal once it is done: leadership may end before the start does.
   */
  onStartedLeading(signal: AbortSignal): Promise<void> | void;
  /**
   * Called once per leadership, the moment it ends (lost lease, renew deadline passed, or stop()), without
   * waiting for a start in progress: when the lease is lost this is what keeps the old leader from
   * reconciling alongside the new one. Stop reconciling here. The elector awaits the returned promise (and
   * the start's) before it stands for election again or, on stop(), releases the lease.
   */
  onStoppedLeading(): Promise<void> | void;
}

export interface LeaderElector {
  /**
   * Stands for election until stop(): leads when elected, and after a lost leadership stands again.
   * Resolves after stop() has released leadership; rejects if onStartedLeading throws (after stepping down).
   */
  run(callbacks: LeaderCallbacks): Promise<void>;
  /** Steps down (releasing the lease so another replica takes over at once) and ends run(). Idempotent. */
  stop(): Promise<void>;
  isLeader(): boolean;
}

/** The single process of the embedded mode: leads from run() until stop(). */
export function alwaysLeader(): LeaderElector {
  let leading = false;
  let stopRequested: (() => void) | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  return {
    isLeader: () => leading,
    run(callbacks) {
      if (running) throw new Error('alwaysLeader: run() called twice');
      running = (async () => {
        if (stopped) return;
        const abort = new AbortController();
        const stop = new Promise<void>((resolve) => (stopRequested = resolve));
        leading = true;
        try {
          await callbacks.onStartedLeading(abort.signal);
          await stop;
        } finally {
          leading = false;
          abort.abort();
          await callbacks.onStoppedLeading();
        }
      })();
      return running;
    },
    async stop() {
      stopped = true;
      stopRequested?.();
      await running?.catch(() => undefined);
    },
  };
}
