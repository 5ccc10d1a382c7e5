import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

/** Records which anvil serves a state file, so that the next start can find it if this process dies hard. */
export function writeAnvilPid(pidPath: string, pid: number): void {
  writeFileSync(pidPath, `${pid}\n`);
}

/**
 * Stops an anvil left behind by a previous run that was killed before it could clean up (SIGKILL, OOM). Only a
 * process whose command line names this very state file is touched: a reused pid is left alone.
 */
export async function reapStaleAnvil(pidPath: string, statePath: string, log: (line: string) => void): Promise<void> {
  if (!existsSync(pidPath)) return;
  const pid = Number(readFileSync(pidPath, 'utf8').trim());
  rmSync(pidPath, { force: true });
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  const cmdline = commandLine(pid);
  if (!cmdline?.includes('anvil') || !cmdline.includes(statePath)) return;
  log(`devnet: stopping a stale anvil (pid ${pid}) left over for ${statePath}`);
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (isAlive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The process's arguments joined by spaces, where the platform exposes them without a subprocess (Linux). */
function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return undefined;
  }
}
