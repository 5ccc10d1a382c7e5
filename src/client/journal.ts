import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';

/**
 * A small local journal of the executes this machine's clients (the CLI, the MCP server) send, so a request
 * id is never lost (spec 7: "persist every request ID"). Each execute writes a `sent` line *before* it goes
 * out, with its Idempotency-Key and body, and an `answered` line when the answer arrives. A client killed in
 * between leaves a `sent` line only: its request id is still known (derived from the Idempotency-Key, see
 * requestIds.ts), so `status --last` can look it up, and `pay` can re-send the same body with its payment.
 *
 * Format: JSON lines, appended one write per line (concurrent clients do not tear each other's lines). When the
 * file passes ROTATE_BYTES it is renamed to `<name>.1` (replacing the previous one) and a new file starts:
 * nothing is rewritten in place, so a crash never loses older lines.
 */

export const JOURNAL_ENV = 'AGENT_WALLET_JOURNAL';
const ROTATE_BYTES = 8 * 1024 * 1024;

const SentSchema = z.object({
  v: z.literal(1),
  kind: z.literal('sent'),
  at: z.string(),
  base_url: z.string(),
  /** The API key's public client id (never the secret): entries of other keys are not this key's requests. */
  client_id: z.string().nullable(),
  idempotency_key: z.string(),
  /** The request id the service derives from the Idempotency-Key, when the key's form allows computing it. */
  request_id: z.string().nullable(),
  /** What was sent: the execute body, or a protocol action's path and body. */
  path: z.string().default('/execute'),
  body: z.record(z.string(), z.unknown()),
});
const AnsweredSchema = z.object({
  v: z.literal(1),
  kind: z.literal('answered'),
  at: z.string(),
  idempotency_key: z.string(),
  request_id: z.string().nullable(),
  /** `queued`, `payment_required`, or the API's error code. */
  outcome: z.string(),
  http_status: z.number().int(),
});
const LineSchema = z.discriminatedUnion('kind', [SentSchema, AnsweredSchema]);

export type SentEntry = z.infer<typeof SentSchema>;
export type AnsweredEntry = z.infer<typeof AnsweredSchema>;

/** One execute as the journal knows it: what was sent, and the last answer, if one came. */
export interface JournalRecord {
  sent: SentEntry;
  answer?: AnsweredEntry;
  /** The request id: the answer's, else the one derived from the Idempotency-Key. */
  requestId: string | null;
}

/** `$AGENT_WALLET_JOURNAL`, else `$XDG_STATE_HOME/agent-wallet/journal.jsonl` (default `~/.local/state`). */
export function defaultJournalPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env[JOURNAL_ENV]) return env[JOURNAL_ENV];
  const state = env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(state, 'agent-wallet', 'journal.jsonl');
}

export interface Journal {
  readonly path: string;
  recordSent(entry: Omit<SentEntry, 'v' | 'kind' | 'at' | 'path'> & { path?: string }): void;
  recordAnswer(entry: Omit<AnsweredEntry, 'v' | 'kind' | 'at'>): void;
  /** Every execute recorded, oldest first (lines that do not parse are skipped: a journal is never fatal). */
  records(): JournalRecord[];
  /** The newest execute sent to `baseUrl` under `clientId` (any key's when clientId is null). */
  last(filter: { baseUrl: string; clientId: string | null }): JournalRecord | undefined;
  /** The execute that made `requestId`. */
  find(requestId: string): JournalRecord | undefined;
}

export function openJournal(path: string = defaultJournalPath()): Journal {
  const append = (line: object) => {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try {
      if (statSync(path).size > ROTATE_BYTES) renameSync(path, `${path}.1`);
    } catch {
      // no journal yet
    }
    appendFileSync(path, `${JSON.stringify(line)}\n`, { mode: 0o600 });
  };
  const now = () => new Date().toISOString();

  function records(): JournalRecord[] {
    const byKey = new Map<string, JournalRecord>();
    for (const file of [`${path}.1`, path]) {
      if (!existsSync(file)) continue;
      for (const raw of readFileSync(file, 'utf8').split('\n')) {
        if (raw.trim() === '') continue;
        let parsed: z.infer<typeof LineSchema>;
        try {
          parsed = LineSchema.parse(JSON.parse(raw));
        } catch {
          continue;
        }
        if (parsed.kind === 'sent') {
          byKey.delete(parsed.idempotency_key); // re-inserted: a re-send is the newest
          byKey.set(parsed.idempotency_key, { sent: parsed, requestId: parsed.request_id });
        } else {
          const record = byKey.get(parsed.idempotency_key);
          if (!record) continue;
          record.answer = parsed;
          record.requestId = parsed.request_id ?? record.requestId;
        }
      }
    }
    return [...byKey.values()];
  }

  return {
    path,
    recordSent: (e) => append({ v: 1, kind: 'sent', at: now(), path: '/execute', ...e }),
    recordAnswer: (e) => append({ v: 1, kind: 'answered', at: now(), ...e }),
    records,
    last: ({ baseUrl, clientId }) =>
      records()
        .filter((r) => r.sent.base_url === baseUrl && (clientId === null || r.sent.client_id === clientId))
        .at(-1),
    find: (requestId) => records().findLast((r) => r.requestId === requestId),
  };
}
