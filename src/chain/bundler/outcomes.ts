import type { Hex } from 'viem';
import type { OperationOutcome } from '../types.ts';

export type OutcomeListener = (opHash: Hex, outcome: OperationOutcome) => void;

/**
 * Final outcomes (included / dropped) of recent operations, bounded (oldest evicted first), and the listeners
 * they are pushed to. An evicted outcome is not lost: the chain still has it (see outcomeLookup.ts).
 */
export class RecentOutcomes {
  readonly #map = new Map<string, OperationOutcome>();
  /** When each outcome was learned (Date.now()): how long an inclusion has been known, for telling a lag from a rewind. */
  readonly #at = new Map<string, number>();
  readonly #listeners = new Set<OutcomeListener>();
  readonly #max: number;
  readonly #onListenerError: (e: unknown) => void;

  constructor(max: number, onListenerError: (e: unknown) => void = () => {}) {
    this.#max = max;
    this.#onListenerError = onListenerError;
  }

  get(hash: Hex): OperationOutcome | undefined {
    return this.#map.get(hash.toLowerCase());
  }

  /** How long ago the outcome of `hash` was learned, or undefined when it is not held. */
  ageMs(hash: Hex): number | undefined {
    const at = this.#at.get(hash.toLowerCase());
    return at === undefined ? undefined : Date.now() - at;
  }

  /** Records a final outcome and pushes it to every listener. */
  record(hash: Hex, outcome: OperationOutcome): void {
    this.remember(hash, outcome);
    for (const l of this.#listeners) {
      try {
        l(hash, outcome);
      } catch (e) {
        this.#onListenerError(e);
      }
    }
  }

  /** Remembers an outcome learned from the chain without pushing it (nobody is waiting on a push for it). */
  remember(hash: Hex, outcome: OperationOutcome): void {
    const key = hash.toLowerCase();
    this.#map.delete(key);
    this.#map.set(key, outcome);
    this.#at.set(key, Date.now());
    while (this.#map.size > this.#max) {
      const oldest = this.#map.keys().next().value as string;
      this.#map.delete(oldest);
      this.#at.delete(oldest);
    }
  }

  forget(hash: Hex): void {
    this.#map.delete(hash.toLowerCase());
    this.#at.delete(hash.toLowerCase());
  }

  subscribe(listener: OutcomeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
