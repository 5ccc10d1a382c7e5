/**
 * An earlier build of this repository, checked out at test time, for the upgrade tests: its tree is extracted from
 * git (`git archive <commit>`, so the clone's worktree list is left alone) into a temporary directory, with this
 * checkout's node_modules linked in (the dependencies it runs with have not changed since). Its processes are then
 * started from that directory (`node bin/run-ts.js …`, `node bin/agent-wallet.js …`) exactly as the current
 * build's are from here.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The build the upgrade tests upgrade from: the last commit before issue 17 changed ExecutionRequest
 * ("inclusionLost test: races under load fixed"). Move it forward when a release is cut (to the release's commit),
 * so the tests prove what an operator actually runs: the released build's stored requests under the new code.
 * The old build is driven through its own entry points with today's inputs: test/support/serviceChild.ts
 * (`<dataDir> <secret>`, the devnet's manifest), bin/agent-wallet.js's cluster roles and the config file
 * test/support/cluster.ts writes; a baseline must accept those (every commit since the devnet's manifest does).
 */
export const UPGRADE_FROM = 'cedf1f086efe0410d1da2b589f1e5217912f0233';

export interface OldBuild {
  readonly commit: string;
  /** The tree's root: the working directory of its processes. */
  readonly root: string;
  remove(): void;
}

/**
 * Extracts `commit`'s tree. Fails (never skips) when the commit is not in this clone, e.g. a shallow one: the
 * message says how to fetch it.
 */
export async function checkOutBuild(commit: string = UPGRADE_FROM): Promise<OldBuild> {
  const git = (args: string[]) => run('git', args, { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });
  try {
    await git(['cat-file', '-e', `${commit}^{commit}`]);
  } catch (e) {
    const shallow = await git(['rev-parse', '--is-shallow-repository']).then(
      (r) => r.stdout.trim() === 'true',
      () => false,
    );
    throw new Error(
      `the upgrade test runs the build of commit ${commit} and this checkout (${repoRoot}) does not have it` +
        (shallow ? ' (it is a shallow clone)' : '') +
        `: fetch the history (git fetch --unshallow, or git fetch origin ${commit}; in CI check out with full history, ` +
        `e.g. actions/checkout's fetch-depth: 0). git said: ${(e as { stderr?: string }).stderr?.trim() ?? String(e)}`,
    );
  }
  const root = mkdtempSync(join(tmpdir(), `aw-build-${commit.slice(0, 7)}-`));
  try {
    // git archive | tar, without a shell: the archive goes through a temporary file.
    const archive = join(root, '.tree.tar');
    await git(['archive', '--format=tar', '-o', archive, commit]);
    await run('tar', ['-xf', archive, '-C', root]);
    rmSync(archive);
    const modules = join(repoRoot, 'node_modules');
    if (!existsSync(modules)) throw new Error(`no node_modules at ${modules}: run npm ci first`);
    symlinkSync(realpathSync(modules), join(root, 'node_modules'));
  } catch (e) {
    rmSync(root, { recursive: true, force: true });
    throw e;
  }
  return { commit, root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
