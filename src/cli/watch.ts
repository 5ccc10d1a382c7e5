import type { StatusRecord } from '../api/http/index.ts';
import type { AgentWalletClient } from '../client/client.ts';
import { colours, EXIT, fields, printError, printJsonLine, statusColour } from './output.ts';

export interface WatchOptions {
  json: boolean;
  /** Give up after this long (exit 6); the request goes on. */
  timeoutMs: number;
  /** Polling bounds, for a service that does not wait (spec 8.1 advises 2–5 s). */
  minIntervalMs?: number;
  maxIntervalMs?: number;
}

/**
 * Follows a request to a terminal state with waiting GET /status/:id calls (the service answers each change as
 * it happens; client.waitForTerminal). On a terminal it keeps one live line, rewritten as the request moves through its states; otherwise it prints a
 * line per state (with --json, one JSON record per state). Exit code: 0 confirmed, 1 reverted or failed,
 * 6 still not terminal when the wait ran out, or the API error's code.
 */
export async function watchRequest(client: AgentWalletClient, requestId: string, o: WatchOptions): Promise<number> {
  const live = process.stdout.isTTY === true && !o.json;
  const c = colours();
  const started = Date.now();
  const seen: string[] = [];
  let last: StatusRecord | undefined;
  const line = (s: StatusRecord) => {
    const path = seen.map((x, i) => (i === seen.length - 1 ? statusColour(x) : c.dim(x))).join(c.dim(' → '));
    const tx = s.tx_hash ? `  tx ${s.tx_hash.slice(0, 10)}…` : '';
    return `${requestId}  ${path}${tx}  ${((Date.now() - started) / 1000).toFixed(1)} s`;
  };
  const r = await client.waitForTerminal(requestId, {
    timeoutMs: o.timeoutMs,
    ...(o.minIntervalMs !== undefined && { minIntervalMs: o.minIntervalMs }),
    ...(o.maxIntervalMs !== undefined && { maxIntervalMs: o.maxIntervalMs }),
    onStatus: (s) => {
      last = s;
      // An order a keeper settles later (perp-v2) moves on after `confirmed`: its state is part of the line.
      const label = s.order ? `${s.status} (order ${s.order.state})` : s.status;
      const changed = seen.at(-1) !== label;
      if (changed) seen.push(label);
      if (o.json) {
        if (changed) printJsonLine(s);
      } else if (live) {
        process.stdout.write(`\r\x1b[2K${line(s)}`);
      } else if (changed) {
        process.stdout.write(`${new Date().toISOString().slice(11, 19)}  ${label}${s.tx_hash ? `  tx ${s.tx_hash}` : ''}\n`);
      }
    },
  });
  if (live) process.stdout.write('\n');
  if (!r.ok) {
    if (r.error.code === 'wait_timeout') {
      if (!o.json) process.stderr.write(`still ${last?.status ?? 'unknown'} after ${Math.round(o.timeoutMs / 1000)} s; the request goes on: agent-wallet status ${requestId} --watch\n`);
      return EXIT.timeout;
    }
    return printError(r.error, o.json);
  }
  const done = r.value;
  if (!o.json) process.stdout.write(terminalSummary(done));
  return done.status === 'confirmed' ? EXIT.ok : EXIT.ended;
}

export function terminalSummary(s: StatusRecord): string {
  return fields(terminalRows(s));
}

/** The same as rows, for a caller that prints them among its own (one column width for all). */
export function terminalRows(s: StatusRecord): [string, string | number | null | undefined][] {
  return [
    ['status', statusColour(s.status)],
    ['tx_hash', s.tx_hash],
    ['block', s.block_number],
    ['gas_used', s.gas_used],
    ['cost_usd', s.cost_usd],
    ['failure', s.failure ? `${s.failure.code}: ${s.failure.message}` : undefined],
    ['revert_reason', s.failure?.revert_reason ?? undefined],
    ['order', s.order ? `${s.order.state}${s.order.fill_price ? ` at ${s.order.fill_price}` : ''}${s.order.reason ? `: ${s.order.reason}` : ''}` : undefined],
  ];
}
