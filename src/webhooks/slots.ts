/**
 * Attempts in flight per endpoint (an origin: scheme, host and port). The controller's worker count bounds
 * attempts in total; this bounds them per endpoint, so one slow or flooded receiver cannot take every worker
 * and hold back deliveries to everyone else. A delivery that finds its endpoint full does not wait in a
 * worker: it is parked and handed back (its `onFree`) when an attempt to that endpoint ends.
 */
export class EndpointSlots {
  readonly #inFlight = new Map<string, number>();
  readonly #parked = new Map<string, Map<string, () => void>>();

  constructor(readonly perEndpoint: number) {
    if (!(perEndpoint >= 1)) throw new RangeError(`perEndpoint must be at least 1, got ${perEndpoint}`);
  }

  /**
   * Takes a slot of `endpoint` and returns its release, or parks `key` (once, however often it asks) and
   * returns undefined; `onFree` is called when a slot frees.
   */
  tryAcquire(endpoint: string, key: string, onFree: () => void): (() => void) | undefined {
    const n = this.#inFlight.get(endpoint) ?? 0;
    if (n >= this.perEndpoint) {
      let parked = this.#parked.get(endpoint);
      if (!parked) this.#parked.set(endpoint, (parked = new Map()));
      parked.set(key, onFree);
      return undefined;
    }
    this.#inFlight.set(endpoint, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#inFlight.get(endpoint) ?? 1) - 1;
      if (left === 0) this.#inFlight.delete(endpoint);
      else this.#inFlight.set(endpoint, left);
      const parked = this.#parked.get(endpoint);
      const next = parked?.entries().next();
      if (!parked || !next || next.done) return;
      parked.delete(next.value[0]);
      if (parked.size === 0) this.#parked.delete(endpoint);
      next.value[1]();
    };
  }

  /** Attempts in flight to `endpoint`. */
  inFlight(endpoint: string): number {
    return this.#inFlight.get(endpoint) ?? 0;
  }

  /** Deliveries parked for `endpoint`. */
  parked(endpoint: string): number {
    return this.#parked.get(endpoint)?.size ?? 0;
  }
}

/** The endpoint of a URL: its origin (`https://host:port`). */
export const endpointOf = (url: string): string => {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
};
