import { bool, mergeOptions, str, type Command, type ParsedValues } from '../command.ts';
import { BATCH_OPTION, callBodyOf, CALL_OPTIONS } from '../callsInput.ts';
import { clientContext, methodOf, payerOf, PAYER_OPTIONS } from '../context.ts';
import { fields, printError, printJson, printJsonLine, statusColour } from '../output.ts';
import { payAndResubmit } from '../../client/payAndResubmit.ts';
import { randomUUID } from 'node:crypto';
import { CliError } from '../../lib/args.ts';
import { watchRequest } from '../watch.ts';
import type { ExecutionResult } from '../../api/http/index.ts';
import type { AgentWalletClient } from '../../client/index.ts';
import type { PayableCall } from '../../client/payAndResubmit.ts';

export const WAIT_OPTIONS = {
  wait: { type: 'boolean', help: 'then follow the request to confirmed, reverted or failed (exit 0, 1) as status --watch does' },
  timeout: { type: 'string', arg: 'SECONDS', help: 'how long --wait / --watch follow it (default 600); the request goes on after' },
} as const;

export function timeoutMsOf(v: string | undefined): number {
  if (v === undefined) return 600_000;
  const s = Number(v);
  if (!Number.isFinite(s) || s <= 0) throw new CliError(`--timeout must be a positive number of seconds, got ${v}`);
  return s * 1000;
}

export function printResult(r: ExecutionResult, replayed = false): void {
  process.stdout.write(
    fields([
      ['request_id', r.request_id],
      ['replayed', replayed ? 'yes: this Idempotency-Key answered the request it made before' : undefined],
      ['status', statusColour(r.status)],
      ['smart_wallet_address', r.smart_wallet_address],
      ['estimated_gas', r.estimated_gas],
      ['estimated_cost_usd', r.estimated_cost_usd],
      ['message', r.message],
    ]),
  );
}

export const executeCommand: Command = {
  name: 'execute',
  summary: "execute one call or a batch from the agent's wallet",
  usage:
    'execute --agent-id ID [--chain CHAIN] (--to ADDRESS (--data HEX | --abi SIG --function NAME [ARG...]) [--value WEI] | --file FILE|-)\n' +
    '                     [--idempotency-key KEY] [--strategy-id S] [--callback-url URL] [--wait] [--pay ...] [--json]',
  description:
    'Executes through the agent\'s smart wallet (spec 2.4): simulated first, then queued; answers the request_id at once.\n' +
    'Every execute carries an Idempotency-Key (a fresh one unless given) and is written to the local journal before it\n' +
    'is sent, so a lost answer is looked up, never sent twice (agent-wallet status --last). A manual-mode key gets 402\n' +
    '(exit 4) with the quote: pay it with `agent-wallet pay`, or here with --pay.',
  options: mergeOptions(CALL_OPTIONS, BATCH_OPTION, {
    'idempotency-key': { type: 'string', arg: 'KEY', help: 're-use to retry safely: the same key and body answer the first request (default: a fresh UUID)' },
    'strategy-id': { type: 'string', arg: 'LABEL', help: 'your label for the request, echoed by status' },
    'callback-url': { type: 'string', arg: 'URL', help: 'https URL that receives the signed completion webhook (docs/webhooks.md)' },
    pay: { type: 'boolean', help: 'if the answer is 402, pay it from the payer key and re-submit (see agent-wallet pay --help)' },
  }, WAIT_OPTIONS, PAYER_OPTIONS),
  examples: [
    'agent-wallet execute --agent-id my-agent --chain base --to 0xCounter --data 0xd09de08a --wait',
    "agent-wallet execute --agent-id my-agent --to 0xCounter --abi 'function incrementBy(uint256 amount)' --function incrementBy 5",
    "echo '[{\"target_contract\":\"0xCounter\",\"calldata\":\"0xd09de08a\",\"value\":\"0\"}]' | agent-wallet execute --agent-id my-agent --file -",
  ],
  async run(values, positionals) {
    const { client } = clientContext(values);
    const body = await callBodyOf(values, positionals);
    for (const [flag, field] of [['strategy-id', 'strategy_id'], ['callback-url', 'callback_url']] as const) {
      const v = str(values, flag);
      if (v !== undefined) body[field] = v;
    }
    return submitAndReport(client, '/execute', body as PayableCall['body'], values);
  },
};

/**
 * Sends an executing call (POST /execute or a protocol action) with an Idempotency-Key (--idempotency-key or a
 * fresh one); a 402 with --pay is paid from the payer key and re-submitted; prints the answer, then follows the
 * request with --wait. Answers the exit code.
 */
export async function submitAndReport(client: AgentWalletClient, path: string, body: PayableCall['body'], values: ParsedValues): Promise<number> {
  const json = bool(values, 'json');
  const timeoutMs = timeoutMsOf(str(values, 'timeout')); // refused before anything is sent
  const idempotencyKey = str(values, 'idempotency-key') ?? randomUUID();
  let r = await client.executeAt(path, body, { idempotencyKey });
  if (!r.ok && r.error.status === 402 && bool(values, 'pay')) {
    const paid = await payAndResubmit(
      client,
      { path, body, idempotencyKey },
      payerOf(values),
      { method: methodOf(values), token: str(values, 'pay-token') },
      (line) => process.stderr.write(`${line}\n`),
    );
    if (!paid.ok) return printError(paid.error, json);
    r = { ok: true, value: paid.value.result, idempotencyKey, requestId: paid.value.result.request_id, replayed: paid.value.replayed };
  }
  if (!r.ok) return printError(r.error, json);
  // An Idempotency-Key replay answers the request the first attempt made: say so, it was not sent again.
  const answer = r.replayed ? { ...r.value, replayed: true } : r.value;
  if (!bool(values, 'wait')) {
    if (json) printJson(answer);
    else printResult(r.value, r.replayed);
    return 0;
  }
  // --wait --json: one JSON record per line, the execute answer first, then each status record.
  if (json) printJsonLine(answer);
  else printResult(r.value, r.replayed);
  return watchRequest(client, r.value.request_id, { json, timeoutMs });
}
