/**
 * Child process of the "kill -9 right after a recovery" test: writes as crash-writer does (a create, then two
 * status updates per object), on a store whose log's file operations can fail (faultyFiles.ts). After 300
 * acknowledged writes it breaks the disk (`full`: no space, so the log's tail holds part of a record; `eio`:
 * fdatasync fails after the records reached the file), heals it once 50 writes were refused, and goes on.
 *
 *   recovery-writer <dir> <prefix> <full|eio>
 *
 * Lines on stdout (written synchronously): `ready`; `C <name> <rv>` an acknowledged create; `S <name> <rv>
 * <round>` an acknowledged status update; `F <name> <round>` a write refused with Unavailable (round 0: the
 * create), after which that object is left alone; `healed`; `recovered` after the first acknowledgement that
 * follows the healing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isStoreError } from '../../types.ts';
import { openEmbeddedStore } from '../index.ts';
import { faultyFiles } from './faultyFiles.ts';
import { apiClient } from './fixtures.ts';

const [dir, prefix, mode] = process.argv.slice(2);
if (!dir || !prefix || (mode !== 'full' && mode !== 'eio')) {
  console.error('usage: recovery-writer <dir> <prefix> <full|eio>');
  process.exit(2);
}
const files = faultyFiles();
const store = await openEmbeddedStore({ dir, files, compactFloorBytes: 100_000 });
const say = (line: string) => process.stdout.write(`${line}\n`);
say('ready');

let phase: 'before' | 'broken' | 'healed' | 'after' = 'before';
let acks = 0;
let refusals = 0;

function acknowledged(line: string): void {
  say(line);
  acks++;
  if (phase === 'before' && acks >= 300) {
    phase = 'broken';
    if (mode === 'full') files.space = 1_000; // part of the next batch fits
    else files.failSync = true;
  } else if (phase === 'healed') {
    phase = 'after';
    say('recovered');
  }
}

async function refused(e: unknown, line: string): Promise<void> {
  if (!isStoreError(e, 'Unavailable')) throw e;
  say(line);
  refusals++;
  if (phase === 'broken' && refusals >= 50) {
    phase = 'healed';
    files.space = undefined;
    files.failSync = false;
    say('healed');
  }
  await sleep(2);
}

let next = 0;
async function worker(): Promise<void> {
  for (;;) {
    const name = `${prefix}-${next++}`;
    let current;
    try {
      current = await store.create(apiClient(name));
    } catch (e) {
      await refused(e, `F ${name} 0`);
      continue;
    }
    acknowledged(`C ${name} ${current.metadata.resourceVersion}`);
    for (let round = 1; round <= 2; round++) {
      try {
        current = await store.updateStatus({ ...current, status: { rotatedAt: `round-${round}` } });
      } catch (e) {
        await refused(e, `F ${name} ${round}`);
        break;
      }
      acknowledged(`S ${name} ${current.metadata.resourceVersion} ${round}`);
    }
  }
}
await Promise.all(Array.from({ length: 16 }, worker));
