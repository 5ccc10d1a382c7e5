import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { DEVNET_NODE_ENV } from './anvil.ts';
import { PRIVATE_FILE_MODE } from '../lib/privateFs.ts';

/** Records which anvil serves a state file, so that the next start can find it if this process dies hard. */
export function writeAnvilPid(pidPath: string, pid: number): void {
  writeFileSync(pidPath, `${pid}\n`, { mode: PRIVATE_FILE_MODE });
}

/** How to recognise the anvil that served a chain's state, should its pid have been reused meanwhile. */
export interface AnvilIdentity {
  /** The `AGENT_WALLET_DEVNET_NODE` value it was started with (anvil.ts). */
  marker: string;
  /** The `--state` file that versions before the devnet's own snapshots named on anvil's command line. */
  legacyStatePath: string;
}

/**
 * Stops an anvil left behind by a previous run that was killed before it could clean up (SIGKILL, OOM). Only a
 * process that is an anvil serving this very chain state is touched: a reused pid is left alone.
 */
export async function reapStaleAnvil(pidPath: string, identity: AnvilIdentity, log: (line: string) => void): Promise<void> {
  if (!existsSync(pidPath)) return;
  const pid = Number(readFileSync(pidPath, 'utf8').trim());
  rmSync(pidPath, { force: true });
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  if (!isDevnetAnvil(pid, identity)) return;
  log(`devnet: stopping a stale anvil (pid ${pid}) left over for ${identity.marker}`);
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

function isDevnetAnvil(pid: number, identity: AnvilIdentity): boolean {
  const cmdline = commandLine(pid);
  if (!cmdline?.includes('anvil')) return false;
  return devnetNodeMarker(pid) === identity.marker || cmdline.includes(identity.legacyStatePath);
}

/** The `AGENT_WALLET_DEVNET_NODE` a process was started with, where the platform exposes it (Linux). */
export function devnetNodeMarker(pid: number): string | undefined {
  try {
    const prefix = `${DEVNET_NODE_ENV}=`;
    const entry = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((e) => e.startsWith(prefix));
    return entry?.slice(prefix.length);
  } catch {
    return undefined;
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
