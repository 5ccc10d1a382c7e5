import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A lock across the test run's processes for the devnet's shared Uniswap pools: a test that checks a quote against
 * what the swap then does (or a docs page whose outputs show prices) holds it from the quote to the last check, and
 * every test that trades in those pools holds it while it trades, so no other file moves a price in between. Test
 * files run in parallel worker processes against one devnet; this is what keeps them from racing.
 *
 * A directory created with mkdir (atomic) is the lock; it records its holder's pid, so a holder that died (a killed
 * worker) does not block the others: its lock is taken over.
 */
const ROOT = join(tmpdir(), 'agent-wallet-test-locks');

function holderAlive(dir: string): boolean {
  try {
    const pid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    if (!Number.isInteger(pid) || pid <= 0) return false;
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but is not ours to signal; anything else (ESRCH, no pid file yet): treat as alive
    // only while the pid file may still be being written.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock (waiting while another process holds it); the answer releases it. */
export async function acquirePoolLock(name = 'uniswap'): Promise<() => void> {
  mkdirSync(ROOT, { recursive: true });
  const dir = join(ROOT, name);
  let waitedForPidMs = 0;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(join(dir, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (!holderAlive(dir)) {
        // A fresh lock's pid file is written right after its mkdir: give it a moment before calling it dead.
        waitedForPidMs += 20;
        if (waitedForPidMs >= 1_000) {
          rmSync(dir, { recursive: true, force: true });
          waitedForPidMs = 0;
        }
      } else {
        waitedForPidMs = 0;
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  return () => rmSync(dir, { recursive: true, force: true });
}

/** `run` while holding the lock. Not reentrant: never call it inside itself. */
export async function withPoolLock<T>(run: () => Promise<T>, name = 'uniswap'): Promise<T> {
  const release = await acquirePoolLock(name);
  try {
    return await run();
  } finally {
    release();
  }
}

/**
 * Every test of the calling file (or describe block) holds the lock while it runs: for files whose tests quote and
 * trade in the shared pools. Call at the top level of the file or a describe block.
 */
export function holdPoolLockPerTest(hooks: { beforeEach(fn: () => Promise<void>): void; afterEach(fn: () => void): void }, name = 'uniswap'): void {
  let release: (() => void) | undefined;
  hooks.beforeEach(async () => {
    release = await acquirePoolLock(name);
  });
  hooks.afterEach(() => {
    release?.();
    release = undefined;
  });
}
