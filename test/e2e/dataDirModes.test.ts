import { chmod, lstat, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { callAdminSocket } from '../../src/admin/socket.ts';
import { spawnDevServiceChild, stopChild } from '../support/child.ts';
import { tempDir, testDevnet } from '../support/env.ts';
import { apiClient } from '../support/http.ts';
import { until } from '../support/until.ts';

interface Entry {
  path: string;
  type: 'dir' | 'file' | 'socket' | 'other';
  mode: number;
}

/** Every entry under `dir` (itself included), paths relative to it; `devnet/` is the devnet's, not ours. */
async function walk(dir: string, root = dir): Promise<Entry[]> {
  const st = await lstat(dir);
  const out: Entry[] = [{ path: relative(root, dir) || '.', type: 'dir', mode: st.mode & 0o777 }];
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    if (relative(root, path) === 'devnet') continue;
    const s = await lstat(path);
    if (s.isDirectory()) out.push(...(await walk(path, root)));
    else out.push({ path: relative(root, path), type: s.isFile() ? 'file' : s.isSocket() ? 'socket' : 'other', mode: s.mode & 0o777 });
  }
  return out;
}

/** Entries not private to the service's user: directories must be 0700, files and the socket 0600. */
const notPrivate = (entries: Entry[]) =>
  entries.filter((e) => e.mode !== (e.type === 'dir' ? 0o700 : 0o600)).map((e) => `${e.path} (${e.type}) ${e.mode.toString(8).padStart(4, '0')}`);

/** What the service wrote in a data directory where it created a key and archived a finished request. */
function expectEverythingWritten(entries: Entry[]): void {
  const paths = entries.map((e) => `${e.path} ${e.type}`);
  for (const expected of [
    /^\. dir$/,
    /^service-secret file$/,
    /^dev-api-key file$/,
    /^admin\.sock socket$/,
    /^store\/LOCK file$/,
    /^store\/snapshot\.jsonl file$/,
    /^store\/wal-\d+\.log file$/,
    /^webhook-secrets\/\S+ file$/,
    /^archive\/default\/[0-9a-f]{2}\/\S+\.json file$/,
  ]) {
    expect(paths.some((p) => expected.test(p)), `${expected} among ${paths.join(', ')}`).toBe(true);
  }
}

/**
 * The data directory holds the service secret, the API keys' hashes, webhook secrets and an admin socket that
 * creates keys with no other authentication: it is the service user's alone whatever the umask.
 */
describe('the data directory under umask 000', () => {
  const dataDir = join(tempDir('aw-modes-'), 'data'); // created by the service
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child) await stopChild(child);
  });

  /** Starts the service, creates a key over the admin socket, executes one request and waits until it is archived. */
  async function runService(): Promise<void> {
    const started = await spawnDevServiceChild(dataDir, '000');
    child = started.child;
    expect(started.umask).toBe('0000');
    await callAdminSocket(dataDir, 'POST', '/keys', { mode: 'sponsored' });
    const api = apiClient(started.url, started.apiKey);
    const res = await api.post('/execute', {
      agent_id: `modes-${Date.now()}`,
      chain: 'base',
      target_contract: testDevnet().chain('base').testContracts.counter,
      calldata: '0xd09de08a',
      value: '0',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await api.waitForTerminal(res.body.request_id, 60_000);
    await until('the request archived', async () => ((await walk(dataDir)).some((e) => e.path.startsWith('archive/') && e.path.endsWith('.json')) ? true : undefined));
  }

  it('every directory the service makes is 0700, every file and the admin socket 0600', async () => {
    await runService();
    const entries = await walk(dataDir);
    expectEverythingWritten(entries);
    expect(notPrivate(entries)).toEqual([]);
  });

  it('a data directory an older version left world-readable is tightened at start', async () => {
    if (child) await stopChild(child);
    child = undefined;
    // As an older version left it under umask 000: every directory 0777, every file 0666.
    for (const e of await walk(dataDir)) await chmod(join(dataDir, e.path), e.type === 'dir' ? 0o777 : 0o666);
    expect(notPrivate(await walk(dataDir))).not.toEqual([]);
    await runService();
    const entries = await walk(dataDir);
    expectEverythingWritten(entries);
    expect(notPrivate(entries)).toEqual([]);
  });
});
