import { CliError } from '../../lib/args.ts';
import { payAndResubmit } from '../../client/payAndResubmit.ts';
import { clientIdOf } from '../../client/requestIds.ts';
import { bool, str, type Command } from '../command.ts';
import { clientContext, methodOf, payerOf, PAYER_OPTIONS } from '../context.ts';
import { printError, printJson, printJsonLine } from '../output.ts';
import { watchRequest } from '../watch.ts';
import { printResult, timeoutMsOf, WAIT_OPTIONS } from './execute.ts';

export const payCommand: Command = {
  name: 'pay',
  summary: "pay a request's 402 quote from your payer key and re-submit it with the payment",
  usage: 'pay (REQUEST_ID | --last) [--method x402|transfer] [--pay-token SYMBOL] [--payer-key-file FILE] [--rpc-url URL] [--wait] [--json]',
  description:
    'For a manual-mode key: takes the request from the local journal (the same body and Idempotency-Key, so nothing new\n' +
    'is created), reads its quote, pays exactly the quoted amount to the quoted treasury, and re-submits the request with\n' +
    'the payment (spec 4.2). x402 (the default where the 402 offers it) signs an EIP-3009 authorization the service\n' +
    'settles: no gas, no RPC endpoint. transfer sends the tokens on chain (needs the chain\'s RPC URL and gas), then\n' +
    'proves it with X-Payment-Proof; a proof not yet deep enough is re-sent after Retry-After.',
  options: { last: { type: 'boolean', help: 'the newest execute sent from this machine with this key' }, ...PAYER_OPTIONS, ...WAIT_OPTIONS },
  examples: [
    'AGENT_WALLET_PAYER_KEY=0x… agent-wallet pay --last --wait',
    'agent-wallet pay req-idem-3f… --method transfer --pay-token USDC --payer-key-file ~/.payer --rpc-url http://127.0.0.1:8545',
  ],
  async run(values, positionals) {
    const { client, journal } = clientContext(values);
    const json = bool(values, 'json');
    const id = positionals[0];
    if ((id === undefined) === !bool(values, 'last')) throw new CliError('give a request id or --last');
    const record =
      id === undefined ? journal.last({ baseUrl: client.baseUrl, clientId: clientIdOf(process.env.AGENT_WALLET_API_KEY) ?? null }) : journal.find(id);
    if (!record) {
      throw new CliError(
        `${id ?? 'the last request'} is not in the journal ${journal.path}: pay requests this machine sent (or execute --pay); ` +
          'otherwise transfer the quoted amount and re-send the same request with X-Payment-Proof',
      );
    }
    const payer = payerOf(values);
    const paid = await payAndResubmit(
      client,
      { path: record.sent.path, body: record.sent.body as { agent_id: string; chain: string }, idempotencyKey: record.sent.idempotency_key },
      payer,
      { method: methodOf(values), token: str(values, 'pay-token') },
      (line) => (json ? undefined : process.stderr.write(`${line}\n`)),
    );
    if (!paid.ok) return printError(paid.error, json);
    const result = paid.value.result;
    // With --wait the states follow, one record per line: this record is one line too.
    if (json) (bool(values, 'wait') ? printJsonLine : printJson)({ ...result, payment: paid.value.payment ? { method: paid.value.payment.method, token: paid.value.payment.token, amount_raw: paid.value.payment.amountRaw, tx_hash: paid.value.payment.txHash ?? null } : null });
    else {
      if (!paid.value.payment) process.stderr.write('nothing to pay: the request did not ask for a payment (any more)\n');
      printResult(result);
    }
    if (!bool(values, 'wait')) return 0;
    return watchRequest(client, result.request_id, { json, timeoutMs: timeoutMsOf(str(values, 'timeout')) });
  },
};
