import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { keccak256, type Hex } from 'viem';
import { isReceiptDigest, outcomeOf, type ChainJournal, type JournalReply } from './journal.ts';
import type { JournalMark } from './journalMark.ts';
import { nodeRpc, type NodeRpc } from './rpc.ts';
import { rpcMethodKind } from './rpcMethods.ts';
import { writeGate } from './writeGate.ts';

/**
 * The devnet's JSON-RPC endpoint for one chain (the manifest's rpcUrl): a loopback proxy in front of anvil that
 * journals every state-changing call (rpcMethods.ts) and has it on disk before anvil sees it, then records
 * anvil's answer before relaying it. Reads pass straight through, their answers streamed.
 */
export interface RpcProxy {
  url: string;
  /**
   * Runs a snapshot's dump while no write is in flight (writeGate.ts) and returns the mark saying which calls
   * it holds (journalMark.ts).
   */
  cover<T>(dump: () => Promise<T>): Promise<{ mark: JournalMark; value: T }>;
  /** Whether a write (not a send) was journaled at or after `seq`: it may have changed state without a block. */
  wroteSince(seq: number): boolean;
  /** Stops taking requests, lets those in flight finish (at most `graceMs`), then closes every connection. */
  close(graceMs?: number): Promise<void>;
}

export interface StartRpcProxyOptions {
  /** anvil's own URL. */
  upstream: string;
  journal: ChainJournal;
  /** A client of anvil itself, for its pool and mining mode when a snapshot is taken. */
  rpc: NodeRpc;
  /** Sends a replay left in anvil's pool (replay.ts): not settled until a snapshot finds them mined. */
  pending?: ReadonlyArray<{ seq: number; raw: Hex }>;
  /** The last seq a replay applied (-1: none): the next snapshot check then takes one. */
  replayedUpTo?: number;
  /**
   * The port to listen on: the one this chain had in the data directory's last run, so its URL stays the same
   * across restarts. Taken by another program meanwhile: a free one, and the log says so. Default: a free one.
   */
  port?: number;
  /** Named in the log line about a taken port. */
  chain?: string;
  log?: (line: string) => void;
}

interface RpcCall {
  jsonrpc?: string;
  id?: unknown;
  method: string;
  params?: unknown;
}

interface RpcReply extends JournalReply {
  id?: unknown;
}

const NOT_RUN = { ok: false, error: { code: -32600, message: 'anvil answered nothing for it: not run' } } as const;

/** The longest wait between lookups of a send answered without a receipt (waits doubling from 2 ms: ≈ 2 s in all). */
const MINED_LOOKUP_MAX_WAIT_MS = 1_024;

// Hop-by-hop headers are the proxy's own business on each side.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer', 'host']);

export async function startRpcProxy(opts: StartRpcProxyOptions): Promise<RpcProxy> {
  const { journal } = opts;
  const upstream = new URL(opts.upstream);
  const agent = new Agent({ keepAlive: true });
  const gate = writeGate();
  // Sends journaled and not yet answered by anvil: a snapshot taken now may or may not hold them.
  const inFlight = new Set<number>();
  // Sends anvil answered without a receipt (accepted into its pool, or the answer was lost): settled once a
  // snapshot finds them gone from the pool. The hash is computed only then (a bundle is tens of kB).
  const maybePending = new Map<number, { raw: string; hash?: Hex }>();
  for (const p of opts.pending ?? []) maybePending.set(p.seq, { raw: p.raw });
  let lastWriteSeq = opts.replayedUpTo ?? -1;
  let active = 0;
  let drained: (() => void) | undefined;
  let closing = false;
  let journalFailureLogged = false;
  // Its own sockets: receipt lookups must not queue behind a snapshot's dump.
  const lookups = nodeRpc(opts.upstream, { timeoutMs: 5_000 });

  /**
   * eth_sendRawTransaction answers with the hash only; the block comes when anvil mines it, a moment later. It
   * is journaled then, as a later outcome of the same call, so that a replay knows the blocks' order (and which
   * sends shared one) as it does for eth_sendRawTransactionSync. Off the answer's path; given up after a while
   * (automine off, a nonce gap): such a send is still covered by the snapshots' pool check.
   */
  const journalReceiptWhenMined = async (seq: number, raw: string): Promise<void> => {
    const hash = keccak256(raw as Hex);
    for (let waitMs = 2; waitMs <= MINED_LOOKUP_MAX_WAIT_MS && !closing; waitMs *= 2) {
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      const receipt = await lookups.call<{ transactionHash: string } | null>('eth_getTransactionReceipt', [hash]).catch(() => null);
      if (!receipt) continue;
      if (!closing) await journal.recordOutcome(seq, outcomeOf({ result: receipt })).catch(() => undefined);
      maybePending.delete(seq); // mined: the next snapshot holds it
      return;
    }
  };

  const forward = (req: IncomingMessage, body: Buffer, readAnswer = false): Promise<IncomingMessage> =>
    new Promise((resolve, reject) => {
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
      out['content-length'] = String(body.length);
      // An answer the proxy reads must come as plain JSON.
      if (readAnswer) out['accept-encoding'] = 'identity';
      const upstreamReq = request({ host: upstream.hostname, port: upstream.port, path: req.url ?? '/', method: req.method ?? 'POST', agent, headers: out }, resolve);
      upstreamReq.on('error', reject);
      upstreamReq.end(body);
    });

  const relayHeaders = (up: IncomingMessage): Record<string, string | string[]> => {
    const out: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(up.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
    return out;
  };

  /** Reads and everything that is not JSON-RPC over POST: the answer is streamed back as anvil sends it. */
  const passThrough = async (req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> => {
    const up = await forward(req, body);
    res.writeHead(up.statusCode ?? 502, relayHeaders(up));
    up.pipe(res);
    await new Promise<void>((resolve) => {
      up.once('end', resolve);
      up.once('error', () => {
        res.destroy(); // the client sees the connection cut, not an answer that never ends
        resolve();
      });
      res.once('close', resolve);
    });
  };

  const journaled = async (req: IncomingMessage, res: ServerResponse, body: Buffer, calls: RpcCall[], batch: boolean): Promise<void> => {
    const changing = calls.filter((c) => rpcMethodKind(c.method) !== 'read');
    const { seqs, durable } = journal.append(changing.map((c) => ({ method: c.method, params: c.params ?? [] })));
    const sends = changing.flatMap((c, i) => (rpcMethodKind(c.method) === 'send' ? [{ seq: seqs[i]!, call: c }] : []));
    for (const s of sends) inFlight.add(s.seq);
    for (const [i, c] of changing.entries()) if (rpcMethodKind(c.method) === 'write') lastWriteSeq = Math.max(lastWriteSeq, seqs[i]!);
    const unanswered = (): void => {
      for (const s of sends) {
        inFlight.delete(s.seq);
        const raw = rawTransaction(s.call.params);
        if (raw !== undefined) maybePending.set(s.seq, { raw });
      }
    };
    try {
      await durable;
    } catch (error) {
      // Not on disk, so not sent: nothing changed.
      for (const s of sends) inFlight.delete(s.seq);
      if (!journalFailureLogged) opts.log?.(`devnet: ${(error as Error).message}; calls that change the chain are refused until a restart`);
      journalFailureLogged = true;
      return replyError(res, calls, batch, `devnet: the call was not sent: ${(error as Error).message}`);
    }
    let up: IncomingMessage;
    let reply: Buffer;
    try {
      up = await forward(req, body, true);
      reply = await readAll(up);
    } catch (error) {
      unanswered();
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify(errorReply(null, `devnet: anvil did not answer: ${(error as Error).message}`)));
      return;
    }
    // Matched by id. anvil has answered, so a call with no reply of its own did not run: anvil refused the
    // request as a whole (an HTTP error; a batch spoilt by one malformed element) or it was a notification
    // (anvil runs none: 204). Calls sharing an id cannot be told apart, and an answer that does not parse says
    // nothing: those stay without an outcome.
    const replies = up.statusCode === 200 ? repliesById(reply) : new Map<string, RpcReply>();
    const ids = changing.map((c) => idKey(c.id));
    const outcomes = changing.map((_c, i) => {
      const key = ids[i];
      if (replies === undefined || (key !== undefined && ids.indexOf(key) !== ids.lastIndexOf(key))) return undefined;
      const r = key === undefined ? undefined : replies.get(key);
      return r ? outcomeOf(r) : NOT_RUN;
    });
    const recorded: Promise<void>[] = [];
    for (const [i, outcome] of outcomes.entries()) if (outcome) recorded.push(journal.recordOutcome(seqs[i]!, outcome));
    for (const s of sends) {
      inFlight.delete(s.seq);
      const outcome = outcomes[changing.indexOf(s.call)];
      // Only a receipt says it is mined; anything else may have left it in anvil's pool.
      if (!(outcome?.ok === true && isReceiptDigest(outcome.result))) {
        const raw = rawTransaction(s.call.params);
        if (raw !== undefined) maybePending.set(s.seq, { raw });
        if (raw !== undefined && outcome?.ok === true) void journalReceiptWhenMined(s.seq, raw);
      }
    }
    // Recorded before anyone is told: a client never sees an answer the journal does not hold (the write
    // is in the page cache, which a crash of this process does not lose). A failure only loses the outcome.
    await Promise.allSettled(recorded);
    res.writeHead(up.statusCode ?? 502, relayHeaders(up));
    res.end(reply);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readAll(req);
    // A body the proxy cannot read could hold a write it would not journal.
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') {
      res.writeHead(415, { 'content-type': 'application/json' });
      res.end(JSON.stringify(errorReply(null, `devnet: a ${encoding}-encoded request is not accepted; send plain JSON`)));
      return;
    }
    const calls = req.method === 'POST' ? parseCalls(body) : undefined;
    if (!calls || calls.list.every((c) => rpcMethodKind(c.method) === 'read')) return passThrough(req, res, body);
    // Every journaled call falls wholly before or after a dump (writeGate.ts): a send mined during one could leave
    // its effects in the snapshot without its block, and then be neither found nor replayable.
    return gate.write(() => journaled(req, res, body, calls.list, calls.batch));
  };

  const server = createServer((req, res) => {
    active++;
    handle(req, res)
      .catch((error: unknown) => {
        // Half an answer already went out (a stream that broke): cutting the connection is all that is left.
        if (res.headersSent) return res.destroy();
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end(JSON.stringify(errorReply(null, `devnet: ${(error as Error).message}`)));
      })
      .finally(() => {
        if (--active === 0) drained?.();
      });
  });
  // Longer than clients keep idle sockets (undici: 4 s), so the server never closes one a client is reusing.
  server.keepAliveTimeout = 65_000;
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  try {
    await listen(opts.port ?? 0);
  } catch (error) {
    if (opts.port === undefined || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    await listen(0);
    opts.log?.(`devnet: ${opts.chain ?? 'chain'}: RPC port ${opts.port} is taken; now on ${(server.address() as AddressInfo).port} (its manifest says so)`);
  }
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    cover: (dump) =>
      gate.exclusive(async () => {
        const seq = journal.nextSeq;
        const unsettled = [...inFlight].filter((s) => s < seq);
        const pool = await opts.rpc.call<{ pending: Hex; queued: Hex }>('txpool_status');
        if (Number(pool.pending) + Number(pool.queued) === 0) {
          for (const s of maybePending.keys()) if (s < seq) maybePending.delete(s);
        } else {
          const waiting = poolHashes(await opts.rpc.call<TxpoolContent>('txpool_content'));
          for (const [s, p] of maybePending) {
            if (s >= seq) continue;
            p.hash ??= keccak256(p.raw as Hex);
            if (waiting.has(p.hash)) unsettled.push(s);
            else maybePending.delete(s);
          }
        }
        const automine = await opts.rpc.call<boolean>('anvil_getAutomine');
        const value = await dump();
        return { mark: { journal: journal.id, seq, unsettled: unsettled.sort((a, b) => a - b), automine }, value };
      }),
    wroteSince: (seq) => lastWriteSeq >= seq,
    close: async (graceMs = 2_000) => {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (active > 0) {
        await Promise.race([new Promise<void>((resolve) => (drained = resolve)), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
      }
      server.closeAllConnections();
      await closed;
      agent.destroy();
      lookups.close();
    },
  };
}

type TxpoolContent = Record<'pending' | 'queued', Record<string, Record<string, { hash: Hex }>>>;

function poolHashes(content: TxpoolContent): Set<string> {
  const hashes = new Set<string>();
  for (const byAccount of [content.pending, content.queued]) {
    for (const byNonce of Object.values(byAccount ?? {})) for (const tx of Object.values(byNonce)) hashes.add(tx.hash.toLowerCase());
  }
  return hashes;
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    stream.once('error', reject);
  });
}

/**
 * The calls of a JSON-RPC request or batch; undefined when it holds none (anvil answers that with an error
 * itself). A batch's malformed elements are left to anvil too: its well-formed calls still run, so they count.
 */
function parseCalls(body: Buffer): { list: RpcCall[]; batch: boolean } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const batch = Array.isArray(parsed);
  const list = ((batch ? parsed : [parsed]) as unknown[]).filter((c): c is RpcCall => typeof c === 'object' && c !== null && typeof (c as RpcCall).method === 'string');
  return list.length > 0 ? { list, batch } : undefined;
}

function rawTransaction(params: unknown): string | undefined {
  const raw = Array.isArray(params) ? params[0] : undefined;
  return typeof raw === 'string' && /^0x[0-9a-fA-F]*$/.test(raw) ? raw : undefined;
}

const idKey = (id: unknown): string | undefined => (id === undefined || id === null ? undefined : JSON.stringify(id));

/** anvil's replies by id; undefined when its answer is not JSON. */
function repliesById(reply: Buffer): Map<string, RpcReply> | undefined {
  const byId = new Map<string, RpcReply>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(reply.toString('utf8'));
  } catch {
    return undefined;
  }
  for (const r of (Array.isArray(parsed) ? parsed : [parsed]) as RpcReply[]) {
    const key = typeof r === 'object' && r !== null ? idKey(r.id) : undefined;
    if (key !== undefined) byId.set(key, r);
  }
  return byId;
}

function errorReply(id: unknown, message: string): object {
  return { jsonrpc: '2.0', id: id ?? null, error: { code: -32603, message } };
}

function replyError(res: ServerResponse, calls: RpcCall[], batch: boolean, message: string): void {
  const replies = calls.filter((c) => c.id !== undefined).map((c) => errorReply(c.id, message));
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(batch ? replies : (replies[0] ?? errorReply(null, message))));
}
