import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isStoreError } from '../types.ts';
import { openEmbeddedStore, storeOwner } from './index.ts';
import { LOCK_FILE } from './lock.ts';
import { spawnTs } from './testing/child.ts';
import { apiClient } from './testing/fixtures.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aw-lock-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The pid of a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(r.stdout.toString());
}

describe('store lock', () => {
  it('a second open in the same process fails with Unavailable naming the owner', async () => {
    const store = await openEmbeddedStore({ dir });
    try {
      const e = await openEmbeddedStore({ dir }).catch((x: unknown) => x);
      expect(isStoreError(e, 'Unavailable')).toBe(true);
      expect((e as Error).message).toMatch(new RegExp(`^store at .*aw-lock-.* is owned by pid ${process.pid}$`));
      expect(await storeOwner(dir)).toEqual({ pid: process.pid });
    } finally {
      await store.close();
    }
    expect(await storeOwner(dir)).toBeUndefined();
    const again = await openEmbeddedStore({ dir });
    await again.close();
  });

  it('storeOwner of a directory that does not exist is undefined', async () => {
    expect(await storeOwner(join(dir, 'nope'))).toBeUndefined();
  });

  it('another live process holds it; once that process is killed its lock is stale and taken over', async () => {
    const child = spawnTs('src/store/embedded/testing/hold-store.ts', [dir]);
    try {
      await child.waitFor((l) => l === 'ready');
      const pid = child.proc.pid!;
      expect(await storeOwner(dir)).toEqual({ pid });
      const e = await openEmbeddedStore({ dir }).catch((x: unknown) => x);
      expect(isStoreError(e, 'Unavailable')).toBe(true);
      expect((e as Error).message).toContain(`is owned by pid ${pid}`);
    } finally {
      await child.kill('SIGKILL');
    }
    expect(await storeOwner(dir)).toBeUndefined();
    const store = await openEmbeddedStore({ dir });
    await store.create(apiClient('a'));
    const lock = JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as { pid: number };
    expect(lock.pid).toBe(process.pid);
    await store.close();
  });

  it('takes over a lock recorded by a dead pid', async () => {
    const pid = deadPid();
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid, hostname: hostname(), acquiredAt: 'x' }));
    expect(await storeOwner(dir)).toBeUndefined();
    const store = await openEmbeddedStore({ dir });
    expect(await storeOwner(dir)).toEqual({ pid: process.pid });
    await store.close();
  });

  it('takes over a lock left by an earlier process that had our pid (pid 1 in a container)', async () => {
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: process.pid, hostname: hostname(), acquiredAt: 'x' }));
    const store = await openEmbeddedStore({ dir });
    const lock = JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as { acquiredAt: string };
    expect(lock.acquiredAt).not.toBe('x'); // ours now, written afresh
    expect(await storeOwner(dir)).toEqual({ pid: process.pid });
    await store.close();
  });

  it('takes over a lock whose pid now belongs to a process started later (pid reuse)', async () => {
    // Our parent is alive, but the start time recorded is not its start time.
    const ppid = process.ppid;
    await writeFile(
      join(dir, LOCK_FILE),
      JSON.stringify({ pid: ppid, startTime: '1', hostname: hostname(), acquiredAt: 'x' }),
    );
    expect(await storeOwner(dir)).toBeUndefined();
    const store = await openEmbeddedStore({ dir });
    await store.close();
  });

  it('an unreadable lock is left alone while fresh (being written): its owner finishes it and keeps the store', async () => {
    const path = join(dir, LOCK_FILE);
    await writeFile(path, ''); // created, not yet written: its owner is writing it now
    const opening = openEmbeddedStore({ dir }).catch((e: unknown) => e);
    // The owner (a live process: our parent) finishes writing; the opener, which waited, finds it owned.
    await writeFile(path, JSON.stringify({ pid: process.ppid, hostname: hostname(), acquiredAt: 'owner' }));
    const e = await opening;
    expect(isStoreError(e, 'Unavailable'), String(e)).toBe(true);
    expect((e as Error).message).toContain(`owned by pid ${process.ppid}`);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: process.ppid, acquiredAt: 'owner' });
  });

  it('an unreadable lock is taken over once old (its writer died before writing it)', async () => {
    const path = join(dir, LOCK_FILE);
    await writeFile(path, '');
    const old = new Date(Date.now() - 60_000);
    await utimes(path, old, old);
    const store = await openEmbeddedStore({ dir });
    expect(await storeOwner(dir)).toEqual({ pid: process.pid });
    await store.close();
  });

  it('a takeover left half-done by a process that died is finished by the next one', async () => {
    const pid = deadPid();
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid, hostname: hostname(), acquiredAt: 'x' }));
    await writeFile(join(dir, `${LOCK_FILE}.takeover`), JSON.stringify({ pid: deadPid(), hostname: hostname() }));
    const store = await openEmbeddedStore({ dir });
    expect(await storeOwner(dir)).toEqual({ pid: process.pid });
    await store.close();
  });

  for (const [title, stale] of [
    ['a free directory', false],
    ['a directory with a stale lock', true],
  ] as const) {
    it(`three processes racing for ${title}: exactly one wins`, async () => {
      if (stale) {
        await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: deadPid(), hostname: hostname(), acquiredAt: 'x' }));
      }
      const children = [0, 1, 2].map(() => spawnTs('src/store/embedded/testing/hold-store.ts', [dir]));
      try {
        const outcomes = await Promise.all(
          children.map((c) =>
            c.waitFor((l) => l === 'ready', 30_000).then(
              () => 'ready',
              () => (c.stderr().includes('is owned by pid') ? 'refused' : `other: ${c.stderr()}`),
            ),
          ),
        );
        expect(outcomes.sort()).toEqual(['ready', 'refused', 'refused']);
      } finally {
        await Promise.all(children.map((c) => c.kill('SIGKILL')));
      }
    });
  }
});
