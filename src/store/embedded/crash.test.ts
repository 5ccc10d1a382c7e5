import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbeddedStore } from './index.ts';
import { spawnTs } from './testing/child.ts';

/**
 * The real thing: a child process writes as fast as it can and prints every acknowledgement; it is killed
 * with SIGKILL mid-run (with writes in flight, and with compactions happening since its threshold is
 * small); every acknowledged write must be there after reopening. Three rounds on the same directory, so
 * each reopen also replays a log the previous crash left, and takes over its stale lock.
 */
describe('kill -9', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'aw-crash-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loses no acknowledged write', async () => {
    const acked = new Map<string, { rv: number; round: number }>();
    for (const [round, killAfter] of [
      [1, 1500],
      [2, 4000],
      [3, 700],
    ] as const) {
      const child = spawnTs('src/store/embedded/testing/crash-writer.ts', [dir, `r${round}`, '64', '200000']);
      await child.waitFor((line) => line === 'ready');
      await child.waitFor((_, all) => all.length > killAfter);
      await child.kill('SIGKILL');
      const { signal } = await child.exited;
      expect(signal).toBe('SIGKILL');

      let thisRound = 0;
      for (const line of child.lines) {
        const [op, name, rv, statusRound] = line.split(' ');
        if (op !== 'C' && op !== 'S') continue;
        thisRound++;
        acked.set(name!, { rv: Number(rv), round: op === 'S' ? Number(statusRound) : 0 });
      }
      expect(thisRound).toBeGreaterThan(killAfter - 1);

      // The child's small compaction threshold means it crashed with snapshots and rotations behind it.
      expect(existsSync(join(dir, 'snapshot.jsonl'))).toBe(true);
      const store = await openEmbeddedStore({ dir });
      try {
        const { items } = await store.list('ApiClient');
        const byName = new Map(items.map((o) => [o.metadata.name, o]));
        const missing: string[] = [];
        const stale: string[] = [];
        for (const [name, ack] of acked) {
          const obj = byName.get(name);
          if (!obj) missing.push(name);
          else if (Number(obj.metadata.resourceVersion) < ack.rv) stale.push(name);
          else if (ack.round > 0 && obj.status?.rotatedAt !== `round-${ack.round}` && obj.status?.rotatedAt !== 'round-2') {
            stale.push(name);
          }
        }
        expect({ missing, stale }).toEqual({ missing: [], stale: [] });
        // Revisions stay monotonic across the crash: the next write is above everything acknowledged.
        const maxAcked = Math.max(...[...acked.values()].map((a) => a.rv));
        expect(Number(store.currentRevision())).toBeGreaterThanOrEqual(maxAcked);
      } finally {
        await store.close();
      }
    }
  });
});
