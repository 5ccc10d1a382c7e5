/** Child process that opens a store, says `ready`, and holds it until killed: a live owner for lock tests. */
import { openEmbeddedStore } from '../index.ts';

const dir = process.argv[2];
if (!dir) process.exit(2);
await openEmbeddedStore({ dir });
process.stdout.write('ready\n');
setInterval(() => undefined, 60_000);
