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

  /**
   * The disk fails under a child writing as fast as it can (full: a record torn in half at the log's tail;
   * eio: fdatasync fails after whole records reached the file), heals, the store recovers in place, and the
   * child is killed right after (or soon after) its first acknowledgement since. Acknowledged writes must all
   * be there; a refused write must not be, even though a failed sync left it whole in the file.
   */
  it('loses no acknowledged write when killed right after recovering from a failed disk, and keeps no refused one', async () => {
    const recoveryDir = await mkdtemp(join(tmpdir(), 'aw-crash-recovery-'));
    const acked = new Map<string, { rv: number; round: number }>();
    const refusedCreates = new Set<string>();
    /** Objects whose status update `round` was refused: they must keep the round before it. */
    const refusedRound = new Map<string, number>();
    try {
      for (const [round, mode, killAfter] of [
        [1, 'full', 0],
        [2, 'eio', 0],
        [3, 'full', 100],
        [4, 'eio', 100],
      ] as const) {
        const child = spawnTs('src/store/embedded/testing/recovery-writer.ts', [recoveryDir, `r${round}`, mode]);
        await child.waitFor((line) => line === 'ready');
        await child.waitFor((line) => line === 'recovered');
        const at = child.lines.length;
        if (killAfter > 0) await child.waitFor((_, all) => all.length >= at + killAfter);
        await child.kill('SIGKILL');
        expect((await child.exited).signal).toBe('SIGKILL');

        let refusals = 0;
        for (const line of child.lines) {
          const [op, name, a, b] = line.split(' ') as [string, string, string, string];
          if (op === 'C') acked.set(name, { rv: Number(a), round: 0 });
          else if (op === 'S') acked.set(name, { rv: Number(a), round: Number(b) });
          else if (op === 'F') {
            refusals++;
            if (a === '0') refusedCreates.add(name);
            else refusedRound.set(name, Number(a));
          }
        }
        expect(refusals).toBeGreaterThanOrEqual(50);

        const store = await openEmbeddedStore({ dir: recoveryDir });
        try {
          const byName = new Map((await store.list('ApiClient')).items.map((o) => [o.metadata.name, o]));
          const problems: string[] = [];
          for (const [name, ack] of acked) {
            const obj = byName.get(name);
            if (!obj) problems.push(`${name}: acknowledged, missing`);
            else if (Number(obj.metadata.resourceVersion) < ack.rv) problems.push(`${name}: older than acknowledged`);
            else if (ack.round > 0 && obj.status?.rotatedAt !== `round-${ack.round}` && obj.status?.rotatedAt !== 'round-2') {
              problems.push(`${name}: status ${obj.status?.rotatedAt} older than acknowledged round ${ack.round}`);
            }
          }
          for (const name of refusedCreates) if (byName.has(name)) problems.push(`${name}: refused create is there`);
          for (const [name, refused] of refusedRound) {
            const kept = byName.get(name)?.status?.rotatedAt;
            const expected = refused > 1 ? `round-${refused - 1}` : undefined;
            if (kept !== expected) problems.push(`${name}: status ${kept}, but round ${refused} was refused`);
          }
          expect(problems).toEqual([]);
        } finally {
          await store.close();
        }
      }
    } finally {
      await rm(recoveryDir, { recursive: true, force: true });
    }
  });
});
