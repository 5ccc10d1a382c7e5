import { bool, type Command } from '../command.ts';
import { callBodyOf, CALL_OPTIONS } from '../callsInput.ts';
import { clientContext } from '../context.ts';
import { fields, printError, printJson } from '../output.ts';

export const simulateCommand: Command = {
  name: 'simulate',
  summary: 'run one call as the wallet would, without broadcasting: gas and cost',
  usage: 'simulate --agent-id ID [--chain CHAIN] --to ADDRESS (--data HEX | --abi SIG --function NAME [ARG...]) [--value WEI] [--json]',
  description:
    'Simulates one call from the agent\'s wallet (spec 2.2): nothing is stored or broadcast. Answers the gas and the\n' +
    'cost this API key would pay; a call that would fail answers its revert reason (exit 3).',
  options: CALL_OPTIONS,
  examples: [
    "agent-wallet simulate --agent-id my-agent --chain base --to 0xCounter --abi 'function setNumber(uint256 n)' --function setNumber 42",
    'agent-wallet simulate --agent-id my-agent --to 0xCounter --data 0xd09de08a',
  ],
  async run(values, positionals) {
    const { client } = clientContext(values);
    const json = bool(values, 'json');
    const r = await client.simulate((await callBodyOf(values, positionals)) as never);
    if (!r.ok) return printError(r.error, json);
    if (json) printJson(r.value);
    else
      process.stdout.write(
        fields([
          ['simulation', 'succeeded (nothing was broadcast)'],
          ['smart_wallet_address', r.value.smart_wallet_address],
          ['estimated_gas', r.value.estimated_gas],
          ['estimated_cost_usd', r.value.estimated_cost_usd],
        ]),
      );
    return 0;
  },
};
