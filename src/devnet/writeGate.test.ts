import { describe, expect, it } from 'vitest';
import { writeGate } from './writeGate.ts';

const tick = (ms = 1) => new Promise((r) => setTimeout(r, ms));

describe('the gate between journaled calls and snapshot dumps', () => {
  it('a dump never overlaps a call: it waits for the ones in flight, and those that come meanwhile wait for it', async () => {
    const gate = writeGate({ holdMs: 1_000 });
    const events: string[] = [];
    let finishFirst!: () => void;
    const first = gate.write(async () => {
      events.push('first starts');
      await new Promise<void>((r) => (finishFirst = r));
      events.push('first ends');
    });
    await tick();
    const dump = gate.exclusive(async () => {
      events.push('dump starts');
      await tick(5);
      events.push('dump ends');
    });
    await tick();
    const second = gate.write(async () => void events.push('second runs'));
    await tick(5);
    finishFirst();
    await Promise.all([first, dump, second]);
    expect(events).toEqual(['first starts', 'first ends', 'dump starts', 'dump ends', 'second runs']);
  });

  it('a steady stream of calls does not starve a dump: new ones are held while those in flight finish', async () => {
    const gate = writeGate({ holdMs: 1_000 });
    let stop = false;
    let dumped = false;
    let overlapping = 0;
    let inFlight = 0;
    const stream = (async () => {
      const runs: Promise<void>[] = [];
      while (!stop) {
        runs.push(
          gate.write(async () => {
            inFlight++;
            await tick(2);
            inFlight--;
          }),
        );
        await tick(1); // a new call before the last one ended: never a quiet moment on its own
      }
      await Promise.all(runs);
    })();
    await tick(10);
    await gate.exclusive(async () => {
      overlapping = inFlight;
      dumped = true;
    });
    stop = true;
    await stream;
    expect(dumped).toBe(true);
    expect(overlapping).toBe(0);
  });

  it('a call in flight that waits on a held one is not deadlocked: the hold gives way, and the dump comes later', async () => {
    const gate = writeGate({ holdMs: 20 });
    let mined!: () => void;
    const events: string[] = [];
    // With automine off, a send returns only once an evm_mine comes (a call that arrives later).
    const send = gate.write(async () => {
      events.push('send waits for a mine');
      await new Promise<void>((r) => (mined = r));
      events.push('send returns');
    });
    await tick();
    const dump = gate.exclusive(async () => void events.push('dump'));
    await tick();
    const mine = gate.write(async () => {
      events.push('mine');
      mined();
    });
    await Promise.all([send, mine, dump]);
    expect(events).toEqual(['send waits for a mine', 'mine', 'send returns', 'dump']);
  });
});
