import { describe, expect, it } from 'vitest';
import { alwaysLeader } from './leaderElection.ts';

describe('alwaysLeader', () => {
  it('leads from run() until stop(), then stops leading and resolves run()', async () => {
    const elector = alwaysLeader();
    const log: string[] = [];
    let signal: AbortSignal | undefined;
    const run = elector.run({
      onStartedLeading: (s) => {
        signal = s;
        log.push('started');
      },
      onStoppedLeading: () => void log.push(`stopped (aborted: ${signal?.aborted})`),
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual(['started']);
    expect(elector.isLeader()).toBe(true);
    await elector.stop();
    await expect(run).resolves.toBeUndefined();
    expect(log).toEqual(['started', 'stopped (aborted: true)']);
    expect(elector.isLeader()).toBe(false);
  });

  it('a start that fails ends leadership and rejects run()', async () => {
    const elector = alwaysLeader();
    let stopped = 0;
    const run = elector.run({
      onStartedLeading: async () => {
        throw new Error('informer never synced');
      },
      onStoppedLeading: () => void stopped++,
    });
    await expect(run).rejects.toThrow('informer never synced');
    expect(stopped).toBe(1);
    expect(elector.isLeader()).toBe(false);
  });

  it('stop() before run() means it never leads', async () => {
    const elector = alwaysLeader();
    await elector.stop();
    let started = false;
    await elector.run({ onStartedLeading: () => void (started = true), onStoppedLeading: () => undefined });
    expect(started).toBe(false);
  });
});
