import { bool, str, type Command } from '../command.ts';
import { agentIdOf, AGENT_OPTIONS, clientContext } from '../context.ts';
import { fields, printError, printJson } from '../output.ts';

export const walletCommand: Command = {
  name: 'wallet',
  summary: "the agent's smart wallet address on a chain",
  usage: 'wallet --agent-id ID [--chain CHAIN] [--json]',
  description:
    "Resolves the agent's smart wallet (spec 2.1): the same address for the same API key and agent id, every time.\n" +
    'A wallet is counterfactual until its first execution deploys it; tokens sent to it before then are safe.',
  options: AGENT_OPTIONS,
  examples: ['agent-wallet wallet --agent-id my-agent --chain base'],
  async run(values) {
    const { client } = clientContext(values);
    const json = bool(values, 'json');
    const r = await client.wallet(agentIdOf(values), str(values, 'chain'));
    if (!r.ok) return printError(r.error, json);
    if (json) printJson(r.value);
    else {
      const w = r.value;
      process.stdout.write(
        fields([
          ['agent_id', w.agent_id],
          ['chain', w.chain],
          ['smart_wallet_address', w.smart_wallet_address],
          ['deployed', w.deployed ? 'yes' : 'no (counterfactual: deployed by its first execution)'],
        ]),
      );
    }
    return 0;
  },
};
