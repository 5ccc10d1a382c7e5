import { CliError } from '../../lib/args.ts';
import { clientIdOf } from '../../client/requestIds.ts';
import { bool, str, type Command } from '../command.ts';
import { clientContext } from '../context.ts';
import { EXIT, printError, printJson } from '../output.ts';
import { terminalRows, watchRequest } from '../watch.ts';
import { timeoutMsOf, WAIT_OPTIONS } from './execute.ts';
import { fields } from '../output.ts';
import { historyLine } from '../history.ts';

export const statusCommand: Command = {
  name: 'status',
  summary: 'the state of a request; --watch follows it to the end; --last is the newest execute sent from here',
  usage: 'status (REQUEST_ID | --last) [--watch] [--timeout SECONDS] [--json]',
  description:
    'The status record of a request (spec 2.3), the source of truth for its state. --watch shows each change as the\n' +
    'service sees it (waiting GETs, docs/api.md) until confirmed (exit 0), reverted or failed (exit 1).\n' +
    '--last takes the newest execute from the local journal for this key and service, even one whose answer never\n' +
    'came (the CLI was killed): its request id is known from its Idempotency-Key, so it is looked up, not re-sent.',
  options: {
    last: { type: 'boolean', help: "the newest execute sent from this machine with this key (the local journal: AGENT_WALLET_JOURNAL)" },
    watch: { type: 'boolean', help: 'follow it until it is confirmed, reverted or failed' },
    timeout: WAIT_OPTIONS.timeout,
  },
  examples: ['agent-wallet status req-01jabcdefghjkmnpqrstvwxyz0 --watch', 'agent-wallet status --last'],
  async run(values, positionals) {
    const { client, journal } = clientContext(values);
    const json = bool(values, 'json');
    let id = positionals[0];
    let unanswered = false;
    if (bool(values, 'last')) {
      if (id !== undefined) throw new CliError('give a request id or --last, not both');
      const record = journal.last({ baseUrl: client.baseUrl, clientId: clientIdOf(process.env.AGENT_WALLET_API_KEY) ?? null });
      if (!record) throw new CliError(`no execute to ${client.baseUrl} with this key in the journal ${journal.path}`);
      if (!record.requestId) throw new CliError(`the last execute (${record.sent.at}) has no known request id: its answer never came and its API key is not of the aw_ form`);
      id = record.requestId;
      unanswered = record.answer === undefined;
      if (unanswered && !json) process.stderr.write(`the last execute (${record.sent.at}) got no answer; looking up its request ${id}\n`);
    }
    if (id === undefined) throw new CliError('give a request id, or --last');
    if (bool(values, 'watch')) return watchRequest(client, id, { json, timeoutMs: timeoutMsOf(str(values, 'timeout')) });
    const r = await client.status(id);
    if (!r.ok) {
      if (r.error.status === 404 && unanswered) {
        return printError(r.error, json, 'it never reached the service: nothing was executed. Send it again (its Idempotency-Key keeps a retry safe).\n');
      }
      return printError(r.error, json);
    }
    if (json) printJson(r.value);
    else {
      const s = r.value;
      process.stdout.write(
        fields([
          ['request_id', s.request_id],
          ['chain', s.chain],
          ['agent_id', s.agent_id],
          ['created_at', s.created_at],
          ['updated_at', s.updated_at],
          ['history', historyLine(s) || undefined],
          ...terminalRows(s),
        ]),
      );
    }
    return r.value.status === 'reverted' || r.value.status === 'failed' ? EXIT.ended : EXIT.ok;
  },
};
