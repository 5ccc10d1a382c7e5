import { bool, str, type Command } from '../command.ts';
import { clientContext } from '../context.ts';
import { printError, printJson, table } from '../output.ts';

export const feedCommand: Command = {
  name: 'feed',
  summary: 'the newest executions of the whole service (public)',
  usage: 'feed [--limit N] [--json]',
  description: 'The public feed of recent executions (no key needed): status, chain, transaction, number of calls, times.',
  options: { limit: { type: 'string', arg: 'N', help: 'how many, newest first: 1 to 100 (default 20)' } },
  examples: ['agent-wallet feed --limit 5'],
  async run(values) {
    const { client } = clientContext(values);
    const json = bool(values, 'json');
    const r = await client.feed(str(values, 'limit'));
    if (!r.ok) return printError(r.error, json);
    if (json) printJson(r.value);
    else
      process.stdout.write(
        table(
          ['updated', 'status', 'chain', 'calls', 'tx'],
          r.value.executions.map((e) => [e.updated_at, e.status, e.chain, String(e.calls), e.tx_hash ?? '-']),
        ),
      );
    return 0;
  },
};
