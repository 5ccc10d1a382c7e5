import { CliError } from '../../lib/args.ts';
import { bool, type Command } from '../command.ts';
import { clientContext } from '../context.ts';
import { historyLine } from '../history.ts';
import { EXIT, fields, printError, printJson } from '../output.ts';
import { terminalRows } from '../watch.ts';

export const cancelCommand: Command = {
  name: 'cancel',
  summary: 'cancel a request of this key before its operation is signed',
  usage: 'cancel REQUEST_ID [--json]',
  description:
    'Asks the service to cancel the request (POST /status/:id/cancel). One not signed yet ends failed, with failure code\n' +
    'cancelled: nothing was sent to the chain, and a payment it took stays yours as a credit for the next request of\n' +
    'the agent (exit 0). One whose operation was signed, or that finished, can no longer be cancelled: the error says\n' +
    'why (not_cancellable, exit 3). Cancelling again answers the same.',
  options: {},
  examples: ['agent-wallet cancel req-01jabcdefghjkmnpqrstvwxyz0'],
  async run(values, positionals) {
    const { client } = clientContext(values);
    const json = bool(values, 'json');
    const id = positionals[0];
    if (id === undefined) throw new CliError('give the request id to cancel');
    const r = await client.cancel(id);
    if (!r.ok) return printError(r.error, json);
    const s = r.value;
    if (json) printJson(s);
    else {
      const recorded = s.status !== 'failed' ? `cancel recorded at ${s.cancel_requested_at}; the service has not ended it yet: nothing will be signed (agent-wallet status ${s.request_id})\n` : '';
      process.stdout.write(
        fields([
          ['request_id', s.request_id],
          ['chain', s.chain],
          ['agent_id', s.agent_id],
          ['cancel asked', s.cancel_requested_at],
          ['history', historyLine(s) || undefined],
          ...terminalRows(s),
        ]) + recorded,
      );
    }
    return EXIT.ok;
  },
};
