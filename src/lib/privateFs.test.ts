import { chmod, mkdir, stat, lstat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/env.ts';
import { ensurePrivateDir, ensurePrivateTree, openPrivateFile, readPrivateFile, writePrivateFile } from './privateFs.ts';

// The umask itself cannot be changed in a worker thread: test/e2e/dataDirModes.test.ts runs the service under 000.
const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

describe('privateFs', () => {
  it('ensurePrivateTree makes a loose tree private, leaving what a symbolic link points at alone', async () => {
    const root = join(tempDir('aw-private-'), 'tree');
    const outside = join(tempDir('aw-private-'), 'not-ours');
    await mkdir(join(root, 'a', 'b'), { recursive: true });
    await writeFile(join(root, 'top'), 'x');
    await writeFile(join(root, 'a', 'b', 'deep'), 'x');
    await writeFile(outside, 'x');
    await symlink(outside, join(root, 'a', 'link'));
    for (const dir of [root, join(root, 'a'), join(root, 'a', 'b')]) await chmod(dir, 0o777);
    for (const file of [join(root, 'top'), join(root, 'a', 'b', 'deep'), outside]) await chmod(file, 0o666);

    await ensurePrivateTree(root);
    for (const dir of [root, join(root, 'a'), join(root, 'a', 'b')]) expect(await modeOf(dir), dir).toBe(0o700);
    for (const file of [join(root, 'top'), join(root, 'a', 'b', 'deep')]) expect(await modeOf(file), file).toBe(0o600);
    expect(await modeOf(outside)).toBe(0o666);
    expect((await lstat(join(root, 'a', 'link'))).isSymbolicLink()).toBe(true);
  });

  it('ensurePrivateTree creates a missing directory 0700, and does not walk one that is already 0700', async () => {
    const root = join(tempDir('aw-private-'), 'new', 'tree');
    await ensurePrivateTree(root);
    expect(await modeOf(root)).toBe(0o700);
    expect(await modeOf(join(root, '..'))).toBe(0o700);
    // Under a private directory nobody else reaches the file anyway; only a tree an older version left is walked.
    await writeFile(join(root, 'f'), 'x');
    await chmod(join(root, 'f'), 0o644);
    await ensurePrivateTree(root);
    expect(await modeOf(join(root, 'f'))).toBe(0o644);
  });

  it('ensurePrivateDir tightens an existing directory, not its contents', async () => {
    const dir = tempDir('aw-private-');
    await writeFile(join(dir, 'f'), 'x');
    await chmod(join(dir, 'f'), 0o644);
    await chmod(dir, 0o755);
    await ensurePrivateDir(dir);
    expect(await modeOf(dir)).toBe(0o700);
    expect(await modeOf(join(dir, 'f'))).toBe(0o644);
  });

  it('openPrivateFile and writePrivateFile tighten an existing file; readPrivateFile too, and answers undefined when absent', async () => {
    const dir = tempDir('aw-private-');
    const appended = join(dir, 'appended');
    await writeFile(appended, 'a');
    await chmod(appended, 0o666);
    const fh = await openPrivateFile(appended, 'a');
    await fh.close();
    expect(await modeOf(appended)).toBe(0o600);

    const written = join(dir, 'written');
    await writeFile(written, 'old');
    await chmod(written, 0o644);
    await writePrivateFile(written, 'new');
    expect(await modeOf(written)).toBe(0o600);

    const read = join(dir, 'read');
    await writeFile(read, 'secret\n');
    await chmod(read, 0o644);
    expect(await readPrivateFile(read)).toBe('secret\n');
    expect(await modeOf(read)).toBe(0o600);
    expect(await readPrivateFile(join(dir, 'absent'))).toBeUndefined();
  });
});
