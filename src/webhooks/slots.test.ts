import { expect, it } from 'vitest';
import { AttemptSlots } from './slots.ts';

/** Deliveries that ask for slots, and which of them were handed back (their onFree called), in order. */
function deliveries(slots: AttemptSlots) {
  const woken: string[] = [];
  return {
    woken,
    ask: (key: string, client: string, endpoint: string) => slots.tryAcquire({ client, endpoint }, key, () => woken.push(key)),
  };
}

it('one API client has at most perClient attempts in flight however many endpoints it names; other clients go on', () => {
  const slots = new AttemptSlots({ perEndpoint: 2, perClient: 3 });
  const d = deliveries(slots);
  const held = ['e1', 'e2', 'e3'].map((e) => d.ask(`m-${e}`, 'mallory', `https://hooks.test:${e}`));
  expect(held.every((release) => release !== undefined)).toBe(true);
  expect(d.ask('m-e4', 'mallory', 'https://hooks.test:e4')).toBeUndefined();
  expect(d.ask('m-e5', 'mallory', 'https://hooks.test:e5')).toBeUndefined();
  expect(slots.inFlightOf('mallory')).toBe(3);
  expect(slots.parked).toBe(2);
  expect(d.ask('a-e4', 'alice', 'https://hooks.test:e4')).toBeDefined();
  expect(d.woken).toEqual([]);
});

it('a delivery parked on its full client is handed back when an attempt of that client ends, at whichever endpoint', () => {
  const slots = new AttemptSlots({ perEndpoint: 4, perClient: 2 });
  const d = deliveries(slots);
  const first = d.ask('m1', 'mallory', 'https://a.test')!;
  d.ask('m2', 'mallory', 'https://b.test')!;
  expect(d.ask('m3', 'mallory', 'https://c.test')).toBeUndefined();
  expect(d.ask('m4', 'mallory', 'https://d.test')).toBeUndefined();
  expect(d.ask('m3', 'mallory', 'https://c.test')).toBeUndefined(); // asking again keeps its place
  first();
  first(); // a release counts once
  expect(d.woken).toEqual(['m3']);
  expect(d.ask('m3', 'mallory', 'https://c.test')).toBeDefined();
  expect(slots.parked).toBe(1);
  expect(d.ask('m4', 'mallory', 'https://d.test')).toBeUndefined();
});

it('bounds each endpoint too; a freed endpoint wakes a delivery whose client has room, a freed client one whose endpoint has', () => {
  const slots = new AttemptSlots({ perEndpoint: 1, perClient: 1 });
  const d = deliveries(slots);
  const alice = d.ask('alice', 'alice', 'https://one.test')!;
  const bob = d.ask('bob', 'bob', 'https://two.test')!;
  expect(d.ask('bob-2', 'bob', 'https://one.test')).toBeUndefined(); // both its endpoint and its client are full
  expect(d.ask('carol', 'carol', 'https://one.test')).toBeUndefined(); // its endpoint is full
  alice();
  expect(d.woken).toEqual(['carol']); // bob-2 parked first, but its client is still full
  const carol = d.ask('carol', 'carol', 'https://one.test')!;
  bob();
  expect(d.woken).toEqual(['carol']); // bob's client has room now, its endpoint has none
  carol();
  expect(d.woken).toEqual(['carol', 'bob-2']);
  expect(d.ask('bob-2', 'bob', 'https://one.test')).toBeDefined();
  expect(slots.inFlightTo('https://one.test')).toBe(1);
  expect(slots.parked).toBe(0);
});
