/** Running the CLI as a user does in a terminal: one Node process per command (bin/agent-wallet.js), its stdout or its failure. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Each CLI call is a Node process that loads the TypeScript sources: seconds on a loaded machine. A test making
 * several, one after another, gets a budget far above the default 60 s; a hang still fails it.
 */
export const CLI_TEST_TIMEOUT_MS = 240_000;

/** The command's stdout; rejects if it exits non-zero. */
export const cli = async (...args: string[]): Promise<string> => (await run(process.execPath, ['bin/agent-wallet.js', ...args])).stdout;

/** The failure of a command meant to fail (its exit code and output); throws if it succeeds. */
export async function cliFails(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    await run(process.execPath, ['bin/agent-wallet.js', ...args]);
  } catch (e) {
    return e as { code: number; stdout: string; stderr: string };
  }
  throw new Error(`agent-wallet ${args.join(' ')} succeeded`);
}
