import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { CHAIN_IDS, type ChainName } from '../config/chains.ts';
import { ANVIL_ACCOUNT_COUNT } from './accounts.ts';
import type { AnvilInstance, StartAnvilParameters } from './anvil.ts';
import { DevnetError } from './errors.ts';
import { journalDir, openJournal, setJournalAside, type ChainJournal, type JournalEntry } from './journal.ts';
import { lowWater } from './journalMark.ts';
import { journalRetention } from './journalRetention.ts';
import { reapStaleAnvil, writeAnvilPid } from './pidfile.ts';
import { replayJournal } from './replay.ts';
import { nodeRpc } from './rpc.ts';
import { startRpcProxy, type RpcProxy } from './rpcProxy.ts';
import { latestHead, startSnapshotter, type Snapshotter } from './snapshotter.ts';
import { chainStateFiles, prepareChainState, snapshotMarkOf, type PreparedChainState } from './stateFile.ts';

/** One chain of the devnet, running: anvil, the journaling proxy in front of it, its snapshotter. */
export interface ChainNode {
  node: AnvilInstance;
  /** The manifest's rpcUrl: the proxy, through which every write is journaled (rpcProxy.ts). */
  rpcUrl: string;
  snapshotter: Snapshotter;
  /**
   * Stops taking calls (those in flight finish), takes a last snapshot if `final` and the chain moved, closes
   * the journal and stops anvil. A failed snapshot does not keep anvil running: the previous one is on disk.
   */
  stop(opts: { final: boolean }): Promise<void>;
}

export interface StartChainNodeOptions {
  name: ChainName;
  /** The service's data dir (named in messages); the chain's files are in `<dataDir>/devnet/`. */
  dataDir: string;
  signal: AbortSignal;
  startNode: (chain: ChainName, params: StartAnvilParameters) => Promise<AnvilInstance>;
  snapshots?: { pollMs?: number; maxDuty?: number };
  /** The RPC port this chain had in the last run (its manifest's rpcUrl): kept when free. */
  rpcPort?: number | undefined;
  log: (line: string) => void;
}

/**
 * Starts one chain from its files: stops an anvil a killed run left behind, loads the newest usable snapshot,
 * replays the journal's calls that the snapshot does not hold, then opens the proxy and the snapshotter.
 * Rejects with a DevnetError (`ReplayRefused`, `JournalUnusable`) when the journal cannot bring the chain back
 * to what its clients were answered, leaving every file as it was.
 */
export async function startChainNode(opts: StartChainNodeOptions): Promise<ChainNode> {
  const { name, log } = opts;
  const dir = join(opts.dataDir, 'devnet');
  const files = chainStateFiles(dir, name);
  const pidPath = join(dir, `${name}.pid`);
  const refuse = (code: 'ReplayRefused' | 'JournalUnusable', what: string): DevnetError =>
    new DevnetError(code, cannotRestore(name, opts.dataDir, journalDir(dir, name), what));

  // A previous run killed with SIGKILL may have left its anvil running.
  await reapStaleAnvil(pidPath, { marker: files.current, legacyStatePath: files.legacy }, log);
  let opened = await openJournal(journalDir(dir, name));
  if (!opened.ok) throw refuse('JournalUnusable', opened.error.message);
  let { journal, entries } = opened.value;
  let prepared: PreparedChainState | undefined;
  try {
    prepared = await prepareChainState(files, name, log);
    if (!prepared && entries.length > 0) {
      // The chain starts empty (no usable snapshot): the journal's calls applied to state that is gone.
      await journal.close();
      const aside = await setJournalAside(journal.dir);
      log(`devnet: ${name} has no snapshot for its journal to apply to: moved to ${aside}`);
      opened = await openJournal(journalDir(dir, name));
      if (!opened.ok) throw refuse('JournalUnusable', opened.error.message);
      ({ journal, entries } = opened.value);
    }
    const mismatch = prepared && journalMismatch(prepared, journal, entries);
    if (mismatch) throw refuse('JournalUnusable', mismatch);
  } catch (error) {
    await journal.close();
    if (prepared) rmSync(prepared.loadPath, { force: true });
    throw error;
  }

  let pidWritten = false;
  let node: AnvilInstance;
  try {
    node = await opts.startNode(name, {
      chainId: CHAIN_IDS[name],
      loadStatePath: prepared?.loadPath,
      marker: files.current,
      accounts: ANVIL_ACCOUNT_COUNT,
      signal: opts.signal,
      onSpawn: (pid) => {
        writeAnvilPid(pidPath, pid);
        pidWritten = true;
      },
    });
  } catch (error) {
    await journal.close();
    if (pidWritten) rmSync(pidPath, { force: true });
    // anvil's own message names the temporary load file; say which snapshot that was.
    if (prepared && !opts.signal.aborted) throw new Error(`(state from ${prepared.source}) ${(error as Error).message}`, { cause: error });
    throw error;
  } finally {
    // anvil has read it by the time it answers (or it never will).
    if (prepared) rmSync(prepared.loadPath, { force: true });
  }

  const rpc = nodeRpc(node.rpcUrl);
  let proxy: RpcProxy | undefined;
  const shutDown = async (): Promise<void> => {
    await journal.close().catch((error: unknown) => log(`devnet: ${name} journal did not close cleanly: ${(error as Error).message}`));
    rpc.close();
    await node.stop();
    if (pidWritten) rmSync(pidPath, { force: true });
  };
  try {
    // A chain loaded from the current snapshot is saved as it stands; one that fell back (or came from the
    // legacy file) is written again at once, so that the current snapshot is good again.
    const fromCurrent = prepared?.source === files.current;
    const savedHead = fromCurrent ? await latestHead(rpc) : undefined;
    const replayed = await replayJournal({ rpc, entries, mark: prepared?.mark, log: (line) => log(`devnet: ${name} ${line}`) });
    if (!replayed.ok) {
      const r = replayed.error;
      throw refuse('ReplayRefused', `journal entry ${r.seq} (${r.method}${r.hash ? ` of transaction ${r.hash}` : ''}) cannot be replayed: ${r.reason}`);
    }
    proxy = await startRpcProxy({ upstream: node.rpcUrl, journal, rpc, pending: replayed.value.pending, replayedUpTo: replayed.value.lastSeq, port: opts.rpcPort, chain: name, log });
    const retention = journalRetention(journal, {
      current: fromCurrent ? { mark: prepared!.mark } : undefined,
      previous: fromCurrent ? await snapshotMarkOf(files.previous) : prepared?.source === files.previous ? { mark: prepared.mark } : undefined,
    });
    const coverage = { cover: proxy.cover, changedSince: (mark: { seq: number } | undefined) => proxy!.wroteSince(mark?.seq ?? 0), saved: retention.saved };
    const snapshotter = startSnapshotter({ chain: name, rpc, files, savedHead, savedMark: fromCurrent ? prepared!.mark : undefined, coverage, ...opts.snapshots, log });
    const running = proxy;
    return {
      node,
      rpcUrl: running.url,
      snapshotter,
      async stop({ final }) {
        await running.close();
        await snapshotter.stop({ final }).catch((error: unknown) => log(`devnet: ${name} final snapshot failed: ${(error as Error).message}`));
        await shutDown();
      },
    };
  } catch (error) {
    await proxy?.close();
    await shutDown();
    throw error;
  }
}

/** Why the journal cannot apply to the snapshot that was loaded, or undefined when it can. */
function journalMismatch(prepared: PreparedChainState, journal: ChainJournal, entries: readonly JournalEntry[]): string | undefined {
  const { mark, source } = prepared;
  if (mark === undefined) {
    // Older than the journal: every call since the journal began applies to it, if none was dropped.
    return entries.length > 0 && journal.firstSeq > 0
      ? `snapshot ${source} predates the journal, whose calls before ${journal.firstSeq} were dropped since`
      : undefined;
  }
  if (mark.journal !== journal.id) return `snapshot ${source} goes with journal ${mark.journal}, but ${journal.dir} is journal ${journal.id} (was the journal removed?)`;
  if (lowWater(mark) < journal.firstSeq) return `snapshot ${source} needs the journal's calls from ${lowWater(mark)} on, but it starts at ${journal.firstSeq}`;
  return undefined;
}

/** What a refused start says: the chain, what is wrong, and what the way out costs. */
function cannotRestore(chain: ChainName, dataDir: string, journal: string, what: string): string {
  const devnet = join(dataDir, 'devnet');
  return (
    `devnet: the ${chain} chain cannot be brought back to what its clients were answered: ${what}. ` +
    `The snapshots and the journal (${journal}) are left as they are. To start fresh, stop everything using ${dataDir} and ` +
    `remove ${devnet}: the three chains then start empty, with the contracts deployed again at the same addresses. ` +
    `The service's store (${join(dataDir, 'store')}, finished requests in ${join(dataDir, 'archive')}) still holds ` +
    `requests confirmed on the old chains, whose transactions would no longer exist (the service reports CHAIN HISTORY ` +
    `MISMATCH for them): remove those two directories as well for a clean slate (the API keys go with the store).`
  );
}
