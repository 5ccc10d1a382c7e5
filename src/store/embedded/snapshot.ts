import { createReadStream, promises as fs } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { AnyResource } from '../../api/v1alpha1/index.ts';
import { fsyncDir } from '../../lib/fs.ts';
import { openPrivateFile } from '../../lib/privateFs.ts';

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
  /** Objects it holds. */
  count: number;
  /** The file's size. */
  bytes: number;
}

/**
 * Writes the objects (already serialized, one JSON text each) as the snapshot at `revision`; returns its
 * size. If anything fails the temporary file is removed, so a full disk is not left fuller.
 */
export async function writeSnapshot(dir: string, revision: number, objectsJson: readonly string[]): Promise<number> {
  const final = join(dir, SNAPSHOT_FILE);
  const tmp = `${final}.tmp`;
  let bytes = 0;
  try {
    const fh = await openPrivateFile(tmp, 'w'); // renamed into place with its mode: 0600
    try {
      const header: Header = { format: FORMAT, revision, count: objectsJson.length };
      let chunk = JSON.stringify(header) + '\n';
      const flush = async () => {
        const data = Buffer.from(chunk, 'utf8');
        // A short write (the disk filled up) is not an error by itself: go on until all is written or one fails.
        for (let at = 0; at < data.length; ) at += (await fh.write(data, at)).bytesWritten;
        bytes += data.length;
        chunk = '';
      };
      for (const json of objectsJson) {
        chunk += json + '\n';
        if (chunk.length >= 1 << 20) await flush();
      }
      if (chunk.length > 0) await flush();
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(tmp, final);
  } catch (e) {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
  await fsyncDir(dir);
  return bytes;
}

/**
 * Reads the snapshot, handing each object to `onObject` as it is parsed (the file is streamed: the objects
 * are never all parsed at once). Undefined when there is none.
 */
export async function readSnapshot(dir: string, onObject: (obj: AnyResource) => void): Promise<Snapshot | undefined> {
  const path = join(dir, SNAPSHOT_FILE);
  let bytes: number;
  try {
    bytes = (await fs.stat(path)).size;
  } catch {
    return undefined;
  }
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let header: Header | undefined;
  let count = 0;
  for await (const line of lines) {
    if (header === undefined) {
      header = JSON.parse(line) as Header;
      if (header.format !== FORMAT) throw new Error(`${path}: unknown snapshot format ${JSON.stringify(header.format)}`);
      continue;
    }
    onObject(JSON.parse(line) as AnyResource);
    count++;
  }
  if (header === undefined) throw new Error(`${path}: empty snapshot`);
  if (count !== header.count) {
    throw new Error(`${path}: snapshot holds ${count} objects, its header says ${header.count}`);
  }
  return { revision: header.revision, count, bytes };
}

/** Removes temporary files a crash may have left behind. */
export async function removeSnapshotLeftovers(dir: string): Promise<void> {
  await fs.rm(join(dir, `${SNAPSHOT_FILE}.tmp`), { force: true });
}
