import { createHash } from 'node:crypto';
import type { ErrorBody } from '../api/http/index.ts';
import type { DripResult, FaucetInfo } from '../api/http/faucet.ts';

/**
 * The faucet's page for people: one form, no script, no external asset (the page must work on a machine with
 * no network and in any browser), the outcome of a drip above the form. Every value that comes from outside
 * (the form, the Host header, an error message) goes through `escapeHtml`.
 */

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text safe in element content and in double- or single-quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

const STYLE = `
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #1b1f24; background: #f6f7f9; }
main { max-width: 44rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
h1 { font-size: 1.6rem; margin: 0 0 .5rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
form { background: #fff; border: 1px solid #c9ced6; border-radius: 8px; padding: 1rem; }
label { display: block; font-weight: 600; margin-top: .75rem; }
input, select, button { font: inherit; }
input, select { width: 100%; box-sizing: border-box; padding: .5rem; border: 1px solid #6b7280; border-radius: 6px; }
input { font-family: ui-monospace, monospace; }
.hint { margin: .25rem 0 0; color: #4b5563; font-size: .9rem; }
button { margin-top: 1rem; padding: .6rem 1.2rem; border: 0; border-radius: 6px; background: #1d4ed8; color: #fff; cursor: pointer; }
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.result { border-radius: 8px; padding: .75rem 1rem; margin: 1rem 0; border: 2px solid; }
.result h2 { margin-top: 0; }
.ok { background: #ecfdf3; border-color: #15803d; }
.error { background: #fef2f2; border-color: #b91c1c; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dt { font-weight: 600; }
dd { margin: 0; }
code, pre { font-family: ui-monospace, monospace; word-break: break-all; }
pre { white-space: pre-wrap; background: #fff; border: 1px solid #c9ced6; border-radius: 6px; padding: .75rem; }
`;

/** The page's Content-Security-Policy: nothing but this one inline style sheet and posting the form here. */
export const PAGE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface PageInput {
  info: FaucetInfo;
  /** `scheme://host` as the client reached us, for the curl line. */
  origin: string;
  /** What the form shows: the last submission, or the query string's prefill. */
  form: { address: string; chain: string };
  outcome?: { ok: true; result: DripResult; txUrl?: string | undefined } | { ok: false; status: number; body: ErrorBody };
}

const UNITS: readonly [number, string][] = [
  [86_400, 'day'],
  [3_600, 'hour'],
  [60, 'minute'],
  [1, 'second'],
];

/** A duration in its largest whole unit, for a person: [1, 'hour'], [6, 'minute'], [45, 'second']. */
function inUnits(seconds: number): [number, string] {
  for (const [size, name] of UNITS) if (seconds >= size) return [Math.round(seconds / size), name];
  return [1, 'second'];
}

/** "an hour", "6 minutes", "a second": how long to wait. */
export function humanDuration(seconds: number): string {
  const [n, unit] = inUnits(seconds);
  return n === 1 ? `${unit === 'hour' ? 'an' : 'a'} ${unit}` : `${n} ${unit}s`;
}

/** "hour", "6 minutes": the period of "one more every …". */
export function humanPeriod(seconds: number): string {
  const [n, unit] = inUnits(seconds);
  return n === 1 ? unit : `${n} ${unit}s`;
}

/** A decimal token amount with thousands separators: "1100.5" → "1,100.5". */
export function groupDigits(amount: string): string {
  const [whole = '', fraction] = amount.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

const ERROR_TITLES: Readonly<Record<number, string>> = {
  400: 'Check the form',
  429: 'Too many drips for now',
  503: 'The faucet could not send',
};

function success({ result, txUrl }: { result: DripResult; txUrl?: string | undefined }): string {
  const tx = txUrl ? `<a href="${escapeHtml(txUrl)}"><code>${escapeHtml(result.tx_hash)}</code></a>` : `<code>${escapeHtml(result.tx_hash)}</code>`;
  const balance =
    result.balance === null
      ? 'not known (the chain did not answer); look the address up again shortly'
      : `${escapeHtml(groupDigits(result.balance))} aUSD`;
  return `<section class="result ok" role="status" aria-labelledby="result-title" id="result" data-outcome="ok">
<h2 id="result-title">Sent ${escapeHtml(groupDigits(result.amount))} aUSD on ${escapeHtml(result.chain)}</h2>
<dl>
<dt>To</dt><dd><code id="result-address">${escapeHtml(result.address)}</code></dd>
<dt>Transaction</dt><dd id="result-tx">${tx}</dd>
<dt>Block</dt><dd>${escapeHtml(result.block_number)}</dd>
<dt>New balance</dt><dd id="result-balance" data-raw="${escapeHtml(result.balance_raw ?? '')}">${balance}</dd>
</dl>
</section>`;
}

function failure({ status, body }: { status: number; body: ErrorBody }): string {
  const title = ERROR_TITLES[status] ?? 'Something went wrong';
  const retry = body.retry_after_seconds !== undefined ? ` Try again in ${escapeHtml(humanDuration(body.retry_after_seconds))}.` : '';
  const txHash = typeof body['tx_hash'] === 'string' ? `<p>Transaction: <code>${escapeHtml(body['tx_hash'])}</code></p>` : '';
  const trace = body.trace_id !== undefined ? ` (trace id <code>${escapeHtml(body.trace_id)}</code>)` : '';
  return `<section class="result error" role="alert" aria-labelledby="result-title" id="result" data-outcome="error">
<h2 id="result-title">${escapeHtml(title)}</h2>
<p id="result-message">${escapeHtml(body.message)}.${retry}</p>
${txHash}<p class="hint">Error code <code id="result-code">${escapeHtml(body.error)}</code>${trace}</p>
</section>`;
}

export function renderPage({ info, origin, form, outcome }: PageInput): string {
  const amount = escapeHtml(groupDigits(info.amount));
  const options = info.chains
    .map(({ chain, network }) => {
      const selected = chain === form.chain ? ' selected' : '';
      return `<option value="${escapeHtml(chain)}"${selected}>${escapeHtml(chain)} (${escapeHtml(network)})</option>`;
    })
    .join('\n');
  const { per_address: perAddress, per_client: perClient } = info.limits;
  const example = JSON.stringify({ address: '0x…', chain: info.chains[0]?.chain ?? 'ethereum' });
  const result = outcome === undefined ? '' : outcome.ok ? success(outcome) : failure(outcome);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>aUSD faucet · agent-wallet</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>aUSD test token faucet</h1>
<p>Sends <strong>${amount} aUSD</strong>, a test token worth nothing, to an agent's smart wallet, so that the agent can pay
for its executions. The address is the <code>smart_wallet_address</code> that <code>GET /wallet</code> answers.</p>
${result}
<form method="post" action="/">
<label for="address">Smart wallet address</label>
<input id="address" name="address" type="text" required pattern="\\s*0x[0-9a-fA-F]{40}\\s*" autocomplete="off" autocapitalize="off" spellcheck="false" aria-describedby="address-hint" value="${escapeHtml(form.address)}">
<p class="hint" id="address-hint">0x followed by 40 hexadecimal digits.</p>
<label for="chain">Chain</label>
<select id="chain" name="chain">
${options}
</select>
<button type="submit">Send ${amount} aUSD</button>
</form>
<h2>Limits</h2>
<ul>
<li>Each address: ${perAddress.burst} ${perAddress.burst === 1 ? 'drip' : 'drips'} per chain, then one more every ${escapeHtml(humanPeriod(perAddress.every_seconds))}.</li>
<li>Each client address: ${perClient.burst} ${perClient.burst === 1 ? 'drip' : 'drips'} over all addresses and chains, then one more every ${escapeHtml(humanPeriod(perClient.every_seconds))}.</li>
</ul>
<h2>For agents</h2>
<pre>curl -s -X POST ${escapeHtml(origin)}/api/drip -H 'content-type: application/json' \\
  -d '${escapeHtml(example)}'</pre>
<p>The answer has the transaction hash and the new balance. Settings: <a href="/api/info">/api/info</a>; the API: <a href="/openapi.json">/openapi.json</a>.
Tokens come from <code>${escapeHtml(info.faucet_address)}</code>.</p>
</main>
</body>
</html>
`;
}
