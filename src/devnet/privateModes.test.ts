import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { spawnDevnetChild } from './testing/devnetProcess.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Every entry under `dir` (itself included) with its permission bits, as `<mode> <d|f> <path>`. */
function modes(dir: string): string[] {
  const entries = readdirSync(dir, { recursive: true, withFileTypes: true }).map((e) => join(e.parentPath, e.name));
  return [dir, ...entries].map((path) => {
    const stat = statSync(path);
    return `${(stat.mode & 0o777).toString(8)} ${stat.isDirectory() ? 'd' : 'f'} ${path.slice(dir.length) || '.'}`;
  });
}

describe("the devnet's files", () => {
  test('are owner-only (files 0600, directories 0700) under umask 000, and loose ones left earlier are tightened', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-wallet-devnet-modes-'));
    dirs.push(dataDir);
    const devnetDir = join(dataDir, 'devnet');
    // A child process: a vitest worker cannot set its own umask.
    await (await spawnDevnetChild(dataDir, 'exit', { umask: '000' })).exited;
    const first = modes(devnetDir);
    expect(first.some((m) => m.endsWith(' f /manifest.json'))).toBe(true);
    expect(first.some((m) => / f \/ethereum\.journal\/\d+\.ndjson$/.test(m))).toBe(true);
    expect(first.filter((m) => !/^(600 f|700 d) /.test(m))).toEqual([]);

    // As an earlier version (or another umask) left them: readable, even writable, by everyone.
    for (const m of first) chmodSync(join(devnetDir, m.split(' ')[2]!), m.includes(' d ') ? 0o777 : 0o666);
    writeFileSync(join(devnetDir, 'ethereum.state.json.gz.unusable'), 'kept for a post-mortem', { mode: 0o644 });
    chmodSync(join(devnetDir, 'ethereum.state.json.gz.unusable'), 0o644);
    await (await spawnDevnetChild(dataDir, 'exit', { umask: '000' })).exited;
    const second = modes(devnetDir);
    expect(second.some((m) => m.endsWith(' f /ethereum.state.json.gz.unusable'))).toBe(true);
    expect(second.filter((m) => !/^(600 f|700 d) /.test(m))).toEqual([]);
  });
});
