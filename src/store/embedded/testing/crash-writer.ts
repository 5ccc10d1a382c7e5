/**
 * Child process of the kill -9 test: writes objects as fast as it can and prints one line per
 * acknowledged write on stdout (a pipe, written synchronously), until it is killed.
 *
 *   crash-writer <dir> <prefix> <concurrency> <compactFloorBytes>
 *
 * Lines: `C <name> <rv>` for an acknowledged create, `S <name> <rv> <round>` for an acknowledged status update.
 */
import { openEmbeddedStore } from '../index.ts';
import { apiClient } from './fixtures.ts';

const [dir, prefix, concurrencyArg, compactArg] = process.argv.slice(2);
if (!dir || !prefix) {
  console.error('usage: crash-writer <dir> <prefix> <concurrency> <compactFloorBytes>');
  process.exit(2);
}
const store = await openEmbeddedStore({ dir, compactFloorBytes: Number(compactArg ?? 1 << 20) });
process.stdout.write('ready\n');

let next = 0;
async function worker(): Promise<void> {
  for (;;) {
    const name = `${prefix}-${next++}`;
    const created = await store.create(apiClient(name));
    process.stdout.write(`C ${name} ${created.metadata.resourceVersion}\n`);
    let current = created;
    for (let round = 1; round <= 2; round++) {
      current = await store.updateStatus({ ...current, status: { rotatedAt: `round-${round}` } });
      process.stdout.write(`S ${name} ${current.metadata.resourceVersion} ${round}\n`);
    }
  }
}
await Promise.all(Array.from({ length: Number(concurrencyArg ?? 64) }, worker));
