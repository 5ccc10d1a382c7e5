/**
 * Attempts in flight per endpoint (an origin: scheme, host and port) and per API client. The controller's
 * worker count bounds attempts in total; these bound them per endpoint, so one slow or flooded receiver cannot
 * take every worker and hold back deliveries to everyone else, and per client, so one API key cannot either by
 * naming many endpoints (ports, hosts). A delivery that finds its endpoint or its client full does not wait in
 * a worker: it is parked and handed back (its `onFree`) when an attempt of that endpoint or client ends and
 * both have room again.
 */

/** What an attempt counts against. */
export interface SlotOwner {
  endpoint: string;
  client: string;
}

export interface SlotLimits {
  perEndpoint: number;
  perClient: number;
}

interface Parked extends SlotOwner {
  onFree: () => void;
}

export class AttemptSlots {
  readonly #byEndpoint = new Map<string, number>();
  readonly #byClient = new Map<string, number>();
  /** Parked deliveries by key, in the order they parked; and their keys by endpoint and by client. */
  readonly #parked = new Map<string, Parked>();
  readonly #parkedAt = new Map<string, Set<string>>();
  readonly #parkedOf = new Map<string, Set<string>>();

  constructor(readonly limits: SlotLimits) {
    for (const [name, n] of Object.entries(limits)) if (!(n >= 1)) throw new RangeError(`${name} must be at least 1, got ${n}`);
  }

  /**
   * Takes a slot of `owner`'s endpoint and client and returns its release, or parks `key` (once, keeping its
   * place however often it asks) and returns undefined; `onFree` is called when it may have room.
   */
  tryAcquire(owner: SlotOwner, key: string, onFree: () => void): (() => void) | undefined {
    if (!this.#hasRoom(owner)) {
      this.#park(key, { ...owner, onFree });
      return undefined;
    }
    this.#unpark(key);
    add(this.#byEndpoint, owner.endpoint, 1);
    add(this.#byClient, owner.client, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      add(this.#byEndpoint, owner.endpoint, -1);
      add(this.#byClient, owner.client, -1);
      // One slot of each freed: hand each to the first delivery parked on it that the other bound lets through.
      // A delivery handed one that another takes first parks again; a parked one also looks again on its own.
      this.#wakeFirst(this.#parkedAt.get(owner.endpoint));
      this.#wakeFirst(this.#parkedOf.get(owner.client));
    };
  }

  /** Attempts in flight to `endpoint`. */
  inFlightTo(endpoint: string): number {
    return this.#byEndpoint.get(endpoint) ?? 0;
  }

  /** Attempts in flight of `client`. */
  inFlightOf(client: string): number {
    return this.#byClient.get(client) ?? 0;
  }

  /** Deliveries parked, in all. */
  get parked(): number {
    return this.#parked.size;
  }

  #hasRoom(owner: SlotOwner): boolean {
    return this.inFlightTo(owner.endpoint) < this.limits.perEndpoint && this.inFlightOf(owner.client) < this.limits.perClient;
  }

  #park(key: string, parked: Parked): void {
    this.#parked.set(key, parked);
    index(this.#parkedAt, parked.endpoint).add(key);
    index(this.#parkedOf, parked.client).add(key);
  }

  #unpark(key: string): Parked | undefined {
    const parked = this.#parked.get(key);
    if (!parked) return undefined;
    this.#parked.delete(key);
    unindex(this.#parkedAt, parked.endpoint, key);
    unindex(this.#parkedOf, parked.client, key);
    return parked;
  }

  #wakeFirst(keys: Set<string> | undefined): void {
    for (const key of keys ?? []) {
      if (!this.#hasRoom(this.#parked.get(key)!)) continue;
      this.#unpark(key)!.onFree();
      return;
    }
  }
}

function add(counts: Map<string, number>, key: string, n: number): void {
  const next = (counts.get(key) ?? 0) + n;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}

function index(byName: Map<string, Set<string>>, name: string): Set<string> {
  let keys = byName.get(name);
  if (!keys) byName.set(name, (keys = new Set()));
  return keys;
}

function unindex(byName: Map<string, Set<string>>, name: string, key: string): void {
  const keys = byName.get(name);
  keys?.delete(key);
  if (keys?.size === 0) byName.delete(name);
}

/** The endpoint of a URL: its origin (`https://host:port`). */
export const endpointOf = (url: string): string => {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
};
