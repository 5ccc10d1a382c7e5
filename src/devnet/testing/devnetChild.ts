/**
 * Test helper run as a child process (`node bin/run-ts.js src/devnet/testing/devnetChild.ts <dataDir> <mode>`):
 * starts a devnet, prints "ready", then either exits without stopping it (`exit`) or waits to be signalled
 * (`wait`). Lets the tests check that no anvil outlives its parent.
 */
import { startDevnet } from '../devnet.ts';

const [dataDir, mode] = process.argv.slice(2);
if (!dataDir || (mode !== 'exit' && mode !== 'wait')) {
  console.error('usage: devnetChild.ts <dataDir> exit|wait');
  process.exit(2);
}
await startDevnet({ dataDir, log: () => {} });
console.log('ready');
if (mode === 'exit') process.exit(0);
setInterval(() => {}, 60_000);
