import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedStore, type EmbeddedStore } from '../store/embedded/index.ts';
import { findRunningServices, registerRunningService, runningServicesDir } from './running.ts';

const run = promisify(execFile);
const temp = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)));

describe('the running services a keys command finds', () => {
  const stores: EmbeddedStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });
  const serve = async (runtimeDir: string) => {
    const dataDir = temp('aw-running-data-');
    stores.push(await openEmbeddedStore({ dir: join(dataDir, 'store') }));
    const unregister = await registerRunningService({ dataDir, url: 'http://127.0.0.1:1' }, { AGENT_WALLET_RUNTIME_DIR: runtimeDir });
    return { dataDir, unregister };
  };

  it('are those whose process owns their store; a file of a process that is gone is dropped; stop takes it back', async () => {
    const runtimeDir = temp('aw-runtime-');
    const env = { AGENT_WALLET_RUNTIME_DIR: runtimeDir };
    const a = await serve(runtimeDir);
    // A file left by a killed service (its process is gone), and one whose live process owns no store there.
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(join(runtimeDir, 'killed.json'), JSON.stringify({ pid: gone, dataDir: temp('aw-gone-'), startedAt: new Date().toISOString() }));
    writeFileSync(join(runtimeDir, 'other.json'), JSON.stringify({ pid: process.pid, dataDir: temp('aw-none-'), startedAt: new Date().toISOString() }));
    expect(await findRunningServices(env)).toEqual([expect.objectContaining({ pid: process.pid, dataDir: a.dataDir })]);
    expect(readdirSync(runtimeDir).sort()).toEqual([expect.stringMatching(/^[0-9a-f]{16}\.json$/), 'other.json']);
    rmSync(join(runtimeDir, 'other.json'));
    await a.unregister();
    expect(await findRunningServices(env)).toEqual([]);
  });

  it('with two running, `keys` without --data-dir refuses and lists them with the flag to pass', { timeout: 60_000 }, async () => {
    const runtimeDir = temp('aw-runtime-');
    const [a, b] = [await serve(runtimeDir), await serve(runtimeDir)];
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AGENT_WALLET_')));
    const failed = await run(process.execPath, ['bin/agent-wallet.js', 'keys', 'list'], { env: { ...clean, AGENT_WALLET_RUNTIME_DIR: runtimeDir } }).then(
      () => expect.unreachable('keys list succeeded'),
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed.code).toBe(2);
    expect(failed.stderr).toContain('2 agent-wallet services are running; pass --data-dir');
    for (const s of [a, b]) expect(failed.stderr).toContain(`--data-dir ${s.dataDir}`);
  });

  it('live in AGENT_WALLET_RUNTIME_DIR, else XDG_RUNTIME_DIR, else the XDG state directory', () => {
    expect(runningServicesDir({ AGENT_WALLET_RUNTIME_DIR: '/r', XDG_RUNTIME_DIR: '/x' })).toBe('/r');
    expect(runningServicesDir({ XDG_RUNTIME_DIR: '/x', XDG_STATE_HOME: '/s' })).toBe('/x/agent-wallet');
    expect(runningServicesDir({ XDG_STATE_HOME: '/s' })).toBe('/s/agent-wallet/running');
  });
});
