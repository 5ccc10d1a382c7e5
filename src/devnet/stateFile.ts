import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gunzip as gunzipCallback } from 'node:zlib';
import { z } from 'zod';
import { AgentWalletError } from '../lib/errors.ts';
import { readSnapshotMark, type JournalMark } from './journalMark.ts';
import { PRIVATE_FILE_MODE } from '../lib/privateFs.ts';

const gunzip = promisify(gunzipCallback);

/**
 * Where one chain's state lives in `<dataDir>/devnet/`. `current` and `previous` are gzipped `anvil_dumpState`
 * snapshots (the newest and the one before it); `temp` is a snapshot being written; `load` is the plain JSON
 * handed to anvil's `--load-state` at start (anvil reads only plain JSON there), deleted once anvil is up;
 * `legacy` is the `--state` file that earlier versions let anvil rewrite in place, read once for the upgrade.
 */
export interface ChainStateFiles {
  current: string;
  previous: string;
  temp: string;
  load: string;
  legacy: string;
}

export function chainStateFiles(dir: string, chain: string): ChainStateFiles {
  const current = join(dir, `${chain}.state.json.gz`);
  return {
    current,
    previous: join(dir, `${chain}.state.prev.json.gz`),
    temp: `${current}.tmp`,
    load: join(dir, `${chain}.load.json`),
    legacy: join(dir, `${chain}.json`),
  };
}

export type DevnetStateErrorCode = 'StateUnusable';

/** The state's path cannot be read or written (a directory, no permission): not a torn file, so no fallback. */
export class DevnetStateError extends AgentWalletError<DevnetStateErrorCode> {
  override readonly name = 'DevnetStateError';
}

/**
 * Writes one gzipped snapshot so that a crash at any instant leaves a readable one: the bytes go to a
 * temporary file that is fsynced, the current snapshot becomes the previous one, the temporary file becomes
 * the current one, and the directory is fsynced. A crash between the two renames leaves no current snapshot
 * but an intact previous one, which is what the loader falls back to.
 */
export async function writeChainState(files: ChainStateFiles, gzipped: Uint8Array): Promise<void> {
  const fh = await fs.open(files.temp, 'w', PRIVATE_FILE_MODE);
  try {
    await fh.writeFile(gzipped);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await fs.rename(files.current, files.previous);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await fs.rename(files.temp, files.current);
  await fsyncDir(dirname(files.current));
  // The upgrade from anvil's own `--state` file is complete once a snapshot of ours exists.
  await fs.rm(files.legacy, { force: true });
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await fs.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

// The parts of anvil's SerializableState that the devnet relies on; the rest passes through untouched.
const AnvilStateSchema = z.looseObject({
  block: z.looseObject({}),
  accounts: z.record(z.string(), z.unknown()),
  best_block_number: z.union([z.number().int().nonnegative(), z.string().regex(/^0x[0-9a-f]+$/i)]),
  blocks: z.array(z.unknown()),
  transactions: z.array(z.looseObject({ info: z.looseObject({ traces: z.array(z.unknown()).optional() }) })),
});
type AnvilState = z.infer<typeof AnvilStateSchema>;

export interface PreparedChainState {
  /** The plain JSON file for `--load-state`. */
  loadPath: string;
  /** The snapshot it came from. */
  source: string;
  bestBlock: number;
  /** Transactions whose call traces were left out (see `prepareChainState`). */
  tracesDropped: number;
  /** Which journal calls it holds; undefined for a snapshot older than the journal, and the legacy file. */
  mark: JournalMark | undefined;
}

/**
 * Picks the newest usable snapshot (current, then previous, then a legacy `--state` file) and writes it as
 * plain JSON to `files.load`. A torn, empty or garbled snapshot is skipped with a log line saying which one
 * was used instead; `undefined` when none is usable (the chain starts empty). A path that cannot be read at
 * all throws `DevnetStateError`: that is a broken setup, not a crash artefact.
 *
 * Call traces are left out of what is loaded: anvil keeps one for every transaction it mined, they make up
 * 75–90% of a snapshot, and the service never reads them (it reads blocks, receipts and logs, which stay).
 */
export async function prepareChainState(files: ChainStateFiles, chain: string, log: (line: string) => void): Promise<PreparedChainState | undefined> {
  const candidates = [
    { path: files.current, gzipped: true, what: 'snapshot' },
    { path: files.previous, gzipped: true, what: 'previous snapshot' },
    { path: files.legacy, gzipped: false, what: 'legacy state file' },
  ];
  const skipped: string[] = [];
  for (const candidate of candidates) {
    const bytes = await readIfPresent(candidate.path);
    if (bytes === undefined) continue;
    const marked = candidate.gzipped ? readSnapshotMark(bytes) : ({ ok: true, mark: undefined } as const);
    const decoded = marked.ok ? await decodeChainState(bytes, candidate.gzipped) : marked;
    if (!decoded.ok) {
      // Moved aside, kept for a post-mortem: it must never again be taken for good, nor displace the previous
      // snapshot when the next one is written.
      await fs.rename(candidate.path, `${candidate.path}.unusable`);
      log(`devnet: ${chain} ${candidate.what} ${candidate.path} is unusable (${decoded.reason}); moved to ${candidate.path}.unusable`);
      skipped.push(candidate.path);
      continue;
    }
    const { state, exactNumbers } = decoded;
    let tracesDropped = 0;
    let json: string | Uint8Array = decoded.json;
    // Re-serializing is safe only if JSON.parse kept every number exact (anvil writes u64/u128 as numbers).
    if (exactNumbers) {
      for (const tx of state.transactions) {
        if (tx.info.traces && tx.info.traces.length > 0) {
          tx.info.traces = [];
          tracesDropped++;
        }
      }
      if (tracesDropped > 0) json = JSON.stringify(state);
    }
    await fs.writeFile(files.load, json, { mode: PRIVATE_FILE_MODE });
    const bestBlock = Number(state.best_block_number);
    if (skipped.length > 0) log(`devnet: ${chain} falls back to the last good snapshot ${candidate.path} (block ${bestBlock})`);
    else if (candidate.path === files.previous) log(`devnet: ${chain} has no current snapshot (a crash while replacing it): loads ${candidate.path} (block ${bestBlock})`);
    else if (candidate.path === files.legacy) log(`devnet: ${chain} loads the legacy state file ${candidate.path} (block ${bestBlock}) once`);
    return { loadPath: files.load, source: candidate.path, bestBlock, tracesDropped, mark: marked.ok ? marked.mark : undefined };
  }
  if (skipped.length > 0) log(`devnet: ${chain} has no usable snapshot (${skipped.join(', ')}): the chain starts empty`);
  return undefined;
}

async function readIfPresent(path: string): Promise<Buffer | undefined> {
  try {
    return await fs.readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new DevnetStateError('StateUnusable', `cannot read the chain state ${path}: ${(error as Error).message}`, { cause: error });
  }
}

type Decoded = { ok: true; state: AnvilState; json: Buffer; exactNumbers: boolean } | { ok: false; reason: string };

/** Unzips (gzip's CRC and length catch a torn file), parses and checks one snapshot. */
export async function decodeChainState(bytes: Uint8Array, gzipped: boolean): Promise<Decoded> {
  let json: Buffer;
  try {
    json = gzipped ? await gunzip(bytes) : Buffer.from(bytes);
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
  let exactNumbers = true;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json.toString('utf8'), (_key, value: unknown) => {
      if (typeof value === 'number' && !Number.isSafeInteger(value) && Number.isInteger(value)) exactNumbers = false;
      return value;
    });
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
  const result = AnvilStateSchema.safeParse(parsed);
  if (!result.success) return { ok: false, reason: `not an anvil state: ${z.prettifyError(result.error).split('\n')[0]}` };
  return { ok: true, state: result.data, json, exactNumbers };
}

/**
 * The journal mark of a snapshot file (`{ mark: undefined }` when it has none); undefined if the file is missing
 * or not a gzip stream. Only the header is looked at: a torn body is found when it is loaded.
 */
export async function snapshotMarkOf(path: string): Promise<{ mark: JournalMark | undefined } | undefined> {
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    // The header, not the whole snapshot (megabytes on a long-lived chain); a long mark needs more of it.
    for (let length = 64 << 10; ; length *= 4) {
      const { buffer, bytesRead } = await fh.read({ buffer: Buffer.alloc(length), position: 0 });
      const marked = readSnapshotMark(buffer.subarray(0, bytesRead));
      if (marked.ok) return { mark: marked.mark };
      if (bytesRead < length) return undefined;
    }
  } finally {
    await fh.close();
  }
}

/** The chain height recorded in a snapshot file, or undefined if it is missing or unusable (for tests and tools). */
export async function snapshotHeight(path: string): Promise<number | undefined> {
  const bytes = await readIfPresent(path);
  if (bytes === undefined) return undefined;
  const decoded = await decodeChainState(bytes, true);
  return decoded.ok ? Number(decoded.state.best_block_number) : undefined;
}
