import { createReadStream, promises as fs } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { AnyResource } from '../../api/v1alpha1/index.ts';
import { fsyncDir } from '../../lib/fs.ts';

/**
 * The snapshot: every object at one revision, as JSON lines after a header line. It is written to a
 * temporary file, fsynced, renamed over the previous one and the directory fsynced, so a crash leaves either
 * the old snapshot or the new one, never a mix.
 */
export const SNAPSHOT_FILE = 'snapshot.jsonl';
const FORMAT = 'agent-wallet.store.snapshot/v1';

interface Header {
  format: string;
  revision: number;
  count: number;
}

export interface Snapshot {
  revision: number;
  objects: AnyResource[];
}

/** Writes the objects (already serialized, one JSON text each) as the snapshot at `revision`. */
export async function writeSnapshot(dir: string, revision: number, objectsJson: readonly string[]): Promise<void> {
  const final = join(dir, SNAPSHOT_FILE);
  const tmp = `${final}.tmp`;
  const fh = await fs.open(tmp, 'w');
  try {
    const header: Header = { format: FORMAT, revision, count: objectsJson.length };
    let chunk = JSON.stringify(header) + '\n';
    for (const json of objectsJson) {
      chunk += json + '\n';
      if (chunk.length >= 1 << 20) {
        await fh.write(chunk);
        chunk = '';
      }
    }
    if (chunk.length > 0) await fh.write(chunk);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.rename(tmp, final);
  await fsyncDir(dir);
}

export async function readSnapshot(dir: string): Promise<Snapshot | undefined> {
  const path = join(dir, SNAPSHOT_FILE);
  try {
    await fs.access(path);
  } catch {
    return undefined;
  }
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let header: Header | undefined;
  const objects: AnyResource[] = [];
  for await (const line of lines) {
    if (header === undefined) {
      header = JSON.parse(line) as Header;
      if (header.format !== FORMAT) throw new Error(`${path}: unknown snapshot format ${JSON.stringify(header.format)}`);
      continue;
    }
    objects.push(JSON.parse(line) as AnyResource);
  }
  if (header === undefined) throw new Error(`${path}: empty snapshot`);
  if (objects.length !== header.count) {
    throw new Error(`${path}: snapshot holds ${objects.length} objects, its header says ${header.count}`);
  }
  return { revision: header.revision, objects };
}

/** Removes temporary files a crash may have left behind. */
export async function removeSnapshotLeftovers(dir: string): Promise<void> {
  await fs.rm(join(dir, `${SNAPSHOT_FILE}.tmp`), { force: true });
}
