import { formatUnits } from 'viem';
import { ApiError } from '../client/errors.ts';
import { PayError } from '../client/pay.ts';

/**
 * Exit codes by outcome, the same for every command (docs/cli.md), so a script can branch on them:
 * 0 done (a read answered, an execute queued, a watched request confirmed), 1 the request ended reverted or
 * failed, 2 a usage error, 3 the API refused the call (bad input, auth, not found), 4 payment required,
 * 5 the service or a chain is unavailable (no answer, 5xx, still 429 after retries), 6 a wait ran out first,
 * 7 a payment could not be made (the payer's side: balance, RPC, token).
 */
export const EXIT = { ok: 0, ended: 1, usage: 2, refused: 3, payment: 4, unavailable: 5, timeout: 6, payFailed: 7 } as const;

export function exitCodeOf(e: ApiError | PayError): number {
  if (e instanceof PayError) return EXIT.payFailed;
  if (e.code === 'wait_timeout') return EXIT.timeout;
  if (e.status === 402) return EXIT.payment;
  if (e.status === 0 || e.status >= 500 || e.status === 429) return EXIT.unavailable;
  return EXIT.refused;
}

/** Colour on a terminal only, and never under NO_COLOR (https://no-color.org). */
export function colours(stream: NodeJS.WriteStream = process.stdout) {
  const on = stream.isTTY === true && !process.env.NO_COLOR;
  const paint = (code: number) => (s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);
  return { on, green: paint(32), red: paint(31), yellow: paint(33), dim: paint(2), bold: paint(1) };
}

/** `label  value` lines, labels padded to one column. Undefined values are left out. */
export function fields(rows: readonly (readonly [string, string | number | boolean | null | undefined])[]): string {
  const shown = rows.filter((r) => r[1] !== undefined);
  const width = Math.max(...shown.map(([k]) => k.length)) + 2;
  return shown.map(([k, v]) => `${k.padEnd(width)}${v === null ? '-' : String(v)}`).join('\n') + '\n';
}

/** A plain table: a header row and aligned columns, numbers right-aligned. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => /^-?[0-9.,]+$/.test(r[i] ?? '')));
  const line = (r: readonly string[]) =>
    r.map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

export const statusColour = (status: string) => {
  const c = colours();
  if (status === 'confirmed') return c.green(status);
  if (status === 'reverted' || status === 'failed') return c.red(status);
  if (status === 'payment_required') return c.yellow(status);
  return status;
};

export const printJson = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
/** One JSON record on one line: what a stream of records (`--watch`, `--wait`) is made of. */
export const printJsonLine = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

/**
 * An error as the user reads it: the API's own `error` code and message (a missing key is the API's 401,
 * shown as it is), a 402's quote and what to do next. With --json, the body as JSON on stdout.
 */
export function printError(e: ApiError | PayError, json: boolean, hint?: string): number {
  const code = exitCodeOf(e);
  if (json) {
    printJson(
      e instanceof PayError
        ? { error: e.code, message: e.shortMessage, ...e.details }
        : { ...e.body, error: e.code, message: e.message, http_status: e.status },
    );
    return code;
  }
  const c = colours(process.stderr);
  if (e instanceof PayError) {
    process.stderr.write(`${c.red('payment failed')}: ${e.code}: ${e.shortMessage}\n`);
  } else if (e.status === 402 && e.payment) {
    const q = e.payment;
    const refused = q.error === 'payment_verification_failed' ? `${c.red('payment refused')}: ${String((q as { reason?: string }).reason)}: ${e.message}\n` : '';
    process.stderr.write(
      refused +
        `${c.yellow('payment required')} for ${q.request_id} on ${q.chain}: ${q.amount_usd} USD\n` +
        fields([
          ['pay to', q.payment_address],
          // Spec 2.7: the payment tokens have 6 decimals; the raw amount is the exact one to send.
          ['amount', q.accepted_tokens.map((t) => `${formatUnits(BigInt(q.required_amount_raw[t] ?? '0'), 6)} ${t} (raw ${q.required_amount_raw[t]})`).join(' or ')],
          ['x402', e.paymentRequiredHeader ? 'offered (agent-wallet pay signs it; no gas needed)' : 'not offered'],
        ]) +
        (hint ?? `then: agent-wallet pay ${q.request_id}   (payer key in AGENT_WALLET_PAYER_KEY)\n`),
    );
  } else {
    const where = e.status === 0 ? 'no answer' : `HTTP ${e.status}`;
    const field = typeof e.body.field === 'string' ? ` (field ${e.body.field})` : '';
    const message = e.message !== e.code ? `: ${e.message}` : '';
    process.stderr.write(`${c.red('error')} ${e.code}${field}${message} [${where}]\n`);
    if (typeof e.body.request_id === 'string') process.stderr.write(`request_id ${e.body.request_id}\n`);
    if (hint) process.stderr.write(hint);
  }
  return code;
}
