import { readFile } from 'node:fs/promises';
import { CliError, parse } from '../lib/args.ts';
import { WebhookSecretError } from '../webhooks/secret.ts';
import { verifyWebhook, WebhookVerificationError } from '../webhooks/verify.ts';

const USAGE =
  'usage: webhooks verify --header "webhook-id: …" --header "webhook-timestamp: …" --header "webhook-signature: …" ' +
  '[--body-file F (default: stdin)] [--tolerance-seconds N (default 300)] [--json]; the secret from ' +
  'AGENT_WALLET_WEBHOOK_SECRET (or --secret whsec_…, which your shell history keeps)';

/**
 * `agent-wallet webhooks verify`: checks a captured delivery (its headers and exact body) against a signing
 * secret, as a receiver would with verifyWebhook(). For debugging a receiver: "is it my code, or the
 * signature?". Exit 0 when it verifies, 1 when it does not (with the reason), 2 on a usage error.
 */
export async function runWebhooks(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {
    secret: { type: 'string' },
    header: { type: 'string', multiple: true },
    'body-file': { type: 'string' },
    'tolerance-seconds': { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  if (positionals[0] !== 'verify') throw new CliError(USAGE);
  const secret = values.secret ?? process.env.AGENT_WALLET_WEBHOOK_SECRET;
  if (!secret) throw new CliError(`no secret: ${USAGE}`);
  const headers: Record<string, string> = {};
  for (const h of values.header ?? []) {
    const colon = h.indexOf(':');
    if (colon <= 0) throw new CliError(`--header must be "name: value", got ${JSON.stringify(h)}`);
    headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
  }
  const tolerance = values['tolerance-seconds'] === undefined ? 300 : Number(values['tolerance-seconds']);
  if (!Number.isInteger(tolerance) || tolerance < 0) throw new CliError('--tolerance-seconds must be a whole number of seconds');
  const body = values['body-file'] === undefined ? await readStdin() : await readFile(values['body-file']);

  try {
    const event = verifyWebhook(secret, headers, body, { toleranceSeconds: tolerance });
    process.stdout.write(
      values.json ? JSON.stringify({ valid: true, event }) + '\n' : `valid: ${event.type} of ${event.data?.request_id} (webhook-id ${headers['webhook-id']})\n`,
    );
    return 0;
  } catch (e) {
    if (e instanceof WebhookVerificationError || e instanceof WebhookSecretError) {
      process.stdout.write(values.json ? JSON.stringify({ valid: false, error: e.code, message: e.shortMessage }) + '\n' : `invalid: ${e.shortMessage}\n`);
      return 1;
    }
    throw e;
  }
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
