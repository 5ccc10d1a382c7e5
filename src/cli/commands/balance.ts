import { bool, str, type Command } from '../command.ts';
import { agentIdOf, AGENT_OPTIONS, clientContext } from '../context.ts';
import { printError, printJson, table } from '../output.ts';

export const balanceCommand: Command = {
  name: 'balance',
  summary: "native coin and token balances of the agent's wallet",
  usage: 'balance --agent-id ID [--chain CHAIN] [--json]',
  description:
    "The agent's wallet balances on one chain: the native coin and every token the deployment knows, each in whole\n" +
    'units and raw (smallest unit), and whether it is accepted for payment.',
  options: AGENT_OPTIONS,
  examples: ['agent-wallet balance --agent-id my-agent --chain base --json'],
  async run(values) {
    const { client } = clientContext(values);
    const json = bool(values, 'json');
    const r = await client.balance(agentIdOf(values), str(values, 'chain'));
    if (!r.ok) return printError(r.error, json);
    if (json) {
      printJson(r.value);
      return 0;
    }
    const b = r.value;
    process.stdout.write(`${b.smart_wallet_address} on ${b.chain}${b.deployed ? '' : ' (counterfactual)'}\n`);
    process.stdout.write(
      table(
        ['token', 'balance', 'raw', 'payment'],
        [
          [b.native.symbol, b.native.formatted, b.native.wei, '-'],
          ...b.tokens.map((t) => [t.symbol, t.formatted, t.raw, t.accepted_for_payment ? 'accepted' : '-']),
        ],
      ),
    );
    return 0;
  },
};
