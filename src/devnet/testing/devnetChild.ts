/**
 * Test helper run as a child process (`node bin/run-ts.js src/devnet/testing/devnetChild.ts <dataDir> <mode> [log]`):
 * starts a devnet, prints "ready", then either exits without stopping it (`exit`) or waits to be signalled
 * (`wait`). Lets the tests check that no anvil outlives its parent. With `log`, the devnet's log lines go to
 * stderr.
 */
import { startDevnet } from '../devnet.ts';

const [dataDir, mode, logFlag] = process.argv.slice(2);
if (!dataDir || (mode !== 'exit' && mode !== 'wait')) {
  console.error('usage: devnetChild.ts <dataDir> exit|wait [log]');
  process.exit(2);
}
await startDevnet({ dataDir, log: logFlag === 'log' ? (line) => process.stderr.write(`[devnet] ${line}\n`) : () => {} });
console.log('ready');
if (mode === 'exit') process.exit(0);
setInterval(() => {}, 60_000);
