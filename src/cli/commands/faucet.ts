import { createFaucetClient, DEFAULT_FAUCET_URL, FAUCET_URL_ENV } from '../../client/faucet.ts';
import { bool, str, type Command } from '../command.ts';
import { AGENT_OPTIONS, recipientOf } from '../context.ts';
import { fields, printError, printJson } from '../output.ts';

export const faucetCommand: Command = {
  name: 'faucet',
  summary: "send test aUSD to the agent's wallet from the faucet",
  usage: 'faucet (--agent-id ID | --address ADDRESS) [--chain CHAIN] [--faucet-url URL] [--json]',
  description:
    "Asks the aUSD faucet (spec 2.7, docs/faucet.md) to send test aUSD to the agent's smart wallet (resolved with\n" +
    'GET /wallet) or to an address. Answers once the transfer is mined, with the new balance. The faucet limits how\n' +
    'often one wallet and one caller may ask (a refusal says when to come back: exit 5).',
  options: {
    ...AGENT_OPTIONS,
    address: { type: 'string', arg: 'ADDRESS', help: 'a wallet address instead of an agent (no API key needed then)' },
    'faucet-url': { type: 'string', arg: 'URL', help: `the faucet (default: ${FAUCET_URL_ENV}, else ${DEFAULT_FAUCET_URL})` },
  },
  examples: ['agent-wallet faucet --agent-id my-agent --chain base'],
  async run(values) {
    const json = bool(values, 'json');
    const chain = str(values, 'chain');
    const recipient = await recipientOf(values, chain);
    if (!recipient.ok) return printError(recipient.error, json);
    const address = recipient.address;
    const r = await createFaucetClient({ baseUrl: str(values, 'faucet-url') }).drip(address, chain);
    if (!r.ok) return printError(r.error, json);
    if (json) printJson(r.value);
    else
      process.stdout.write(
        fields([
          ['sent', `${r.value.amount} ${r.value.token} to ${r.value.address} on ${r.value.chain}`],
          ['tx_hash', r.value.tx_hash],
          ['block', r.value.block_number],
          ['balance', r.value.balance === null ? null : `${r.value.balance} ${r.value.token}`],
        ]),
      );
    return 0;
  },
};
