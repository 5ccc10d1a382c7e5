import { createHash } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { ensurePrivateDir, readPrivateFile, writePrivateFile } from '../lib/privateFs.ts';
import { canonicalDir, storeOwner } from '../store/embedded/index.ts';

/**
 * Where a running `agent-wallet dev` says which data directory it serves, so that `keys` run from any
 * directory, without `--data-dir`, manages the keys of the service that is running rather than a new store of
 * its own in `./.data` (whose keys that service would answer 401). One file per data directory in a per-user
 * directory: `$AGENT_WALLET_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/agent-wallet`, else
 * `$XDG_STATE_HOME/agent-wallet/running` (default `~/.local/state`). 0700, files 0600: the same user only, as
 * the admin socket it leads to. A file is only a hint: a service counts as running while the process it names
 * owns the store of that directory (the store's lock says so), so a file left by a killed service misleads no one.
 */
export function runningServicesDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENT_WALLET_RUNTIME_DIR) return env.AGENT_WALLET_RUNTIME_DIR;
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, 'agent-wallet');
  return join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'agent-wallet', 'running');
}

const RunningServiceSchema = z.object({
  pid: z.number().int().positive(),
  dataDir: z.string().min(1),
  url: z.string().optional(),
  startedAt: z.string(),
});
export type RunningService = z.infer<typeof RunningServiceSchema>;

const fileOf = (dir: string, dataDir: string) => join(dir, `${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}.json`);

/** Says that this process serves `dataDir`; the returned function takes it back (on stop). */
export async function registerRunningService(
  service: { dataDir: string; url?: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<() => Promise<void>> {
  const dir = runningServicesDir(env);
  const dataDir = await canonicalDir(service.dataDir);
  const path = fileOf(dir, dataDir);
  await ensurePrivateDir(dir);
  const record: RunningService = { pid: process.pid, dataDir, ...(service.url && { url: service.url }), startedAt: new Date().toISOString() };
  await writePrivateFile(path, JSON.stringify(record) + '\n');
  return async () => {
    // Only its own: a later service of the same directory may have written it since.
    const current = await readRecord(path);
    if (current?.pid === process.pid) await rm(path, { force: true });
  };
}

async function readRecord(path: string): Promise<RunningService | undefined> {
  try {
    const text = await readPrivateFile(path);
    if (text === undefined) return undefined;
    const parsed = RunningServiceSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process of this id exists (EPERM: it does, another user's). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The services running now: those whose process owns their directory's store. A file whose process is gone is
 * removed; one whose process lives but does not own the store (now) is only passed over: a store's lock being
 * taken over reads as no owner for a moment, and the file of a service that runs must not go.
 */
export async function findRunningServices(env: NodeJS.ProcessEnv = process.env): Promise<RunningService[]> {
  const dir = runningServicesDir(env);
  const names = await readdir(dir).catch(() => [] as string[]);
  const found: RunningService[] = [];
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const path = join(dir, name);
    const record = await readRecord(path);
    const owner = record && (await storeOwner(join(record.dataDir, 'store')));
    if (record && owner?.pid === record.pid) found.push(record);
    else if (!record || !processExists(record.pid)) await rm(path, { force: true }).catch(() => undefined);
  }
  return found.sort((a, b) => (a.dataDir < b.dataDir ? -1 : a.dataDir > b.dataDir ? 1 : 0));
}
