import { join } from 'node:path';
import { CliError, resolveDataDir } from '../../lib/args.ts';
import { fundOnDevnet, NATIVE_SYMBOL, readDevnetManifest, type FundError } from '../../devnet/fund.ts';
import { bool, str, type Command } from '../command.ts';
import { AGENT_OPTIONS, recipientOf } from '../context.ts';
import { EXIT, fields, printError, printJson } from '../output.ts';

/** Where the devnet's manifest is when no --manifest names it (tests point at a shared devnet's). */
export const DEVNET_MANIFEST_ENV = 'AGENT_WALLET_DEVNET_MANIFEST';

/** Exit codes: a chain that does not answer is 5 (unavailable), every other refusal 3, as for the API's. */
function printFundError(e: FundError, json: boolean): number {
  if (json) printJson(e);
  else process.stderr.write(`agent-wallet: ${e.error}: ${e.message}\n`);
  return e.error === 'chain_unavailable' ? EXIT.unavailable : EXIT.refused;
}

export const devnetFundCommand: Command = {
  name: 'devnet fund',
  summary: "native coin or a devnet token (WETH, USDC, …) to the agent's wallet, on the local devnet only",
  usage: 'devnet fund (--agent-id ID | --address ADDRESS) [--chain CHAIN] [--token SYMBOL] --amount N [--data-dir D | --manifest F] [--json]',
  description:
    "Sends --amount whole tokens to the agent's smart wallet (resolved with GET /wallet, as for `faucet`) or to an\n" +
    'address, on the devnet of `npm start`: native ETH (no --token, or --token ETH) or any token of the devnet\n' +
    "manifest (USDC, USDT, aUSD, WETH). Tokens are minted (WETH is wrapped from ether, then sent), from the manifest's\n" +
    'first funded account. Devnet only: the manifest must be a devnet manifest and the chain an anvil node on its\n' +
    'chain id, or nothing is sent (exit 3, not_a_devnet). Answers once mined, with the new balance.',
  options: {
    ...AGENT_OPTIONS,
    address: { type: 'string', arg: 'ADDRESS', help: 'an address instead of an agent (no API key needed then)' },
    token: { type: 'string', arg: 'SYMBOL', help: `${NATIVE_SYMBOL} (the default) or a token of the devnet manifest: USDC, USDT, aUSD, WETH` },
    amount: { type: 'string', arg: 'N', help: 'whole tokens, a decimal number (10, 0.5)' },
    'data-dir': { type: 'string', arg: 'D', help: 'the data directory of `npm start` (default: AGENT_WALLET_DATA_DIR, else ./.data): its devnet/manifest.json' },
    manifest: { type: 'string', arg: 'F', help: `the devnet manifest itself (default: ${DEVNET_MANIFEST_ENV}, else <data-dir>/devnet/manifest.json)` },
  },
  examples: [
    'agent-wallet devnet fund --agent-id my-agent --chain base --token WETH --amount 10',
    'agent-wallet devnet fund --agent-id my-agent --chain base --amount 1',
  ],
  async run(values, positionals) {
    if (positionals.length > 0) throw new CliError(`unexpected argument ${positionals[0]}: devnet fund takes options only`);
    const json = bool(values, 'json');
    const amount = str(values, 'amount');
    if (amount === undefined) throw new CliError('--amount is required (whole tokens, e.g. --amount 10)');
    const manifestPath =
      str(values, 'manifest') ?? process.env[DEVNET_MANIFEST_ENV] ?? join(resolveDataDir(str(values, 'data-dir')), 'devnet', 'manifest.json');
    const manifest = readDevnetManifest(manifestPath);
    if (!manifest.ok) return printFundError(manifest.error, json);
    const chain = str(values, 'chain') ?? 'ethereum';
    const recipient = await recipientOf(values, chain);
    if (!recipient.ok) return printError(recipient.error, json);
    const address = recipient.address;
    const r = await fundOnDevnet({ manifest: manifest.value, chain, to: address, token: str(values, 'token'), amount });
    if (!r.ok) return printFundError(r.error, json);
    if (json) printJson(r.value);
    else
      process.stdout.write(
        fields([
          ['sent', `${r.value.amount} ${r.value.token} to ${r.value.address} on ${r.value.chain}`],
          ['tx_hash', r.value.tx_hashes.join(', ')],
          ['balance', `${r.value.balance} ${r.value.token}`],
        ]),
      );
    return EXIT.ok;
  },
};
