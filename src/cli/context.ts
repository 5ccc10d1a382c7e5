import { readFileSync } from 'node:fs';
import { privateKeyToAccount } from 'viem/accounts';
import { CHAIN_NAMES, type ChainName } from '../config/chains.ts';
import { createClient, type AgentWalletClient } from '../client/client.ts';
import { openJournal, type Journal } from '../client/journal.ts';
import type { Payer } from '../client/pay.ts';
import { CliError } from '../lib/args.ts';
import { str, type Options, type ParsedValues } from './command.ts';
import type { printError } from './output.ts';

/** Environment variables the client commands read (docs/cli.md). */
export const ENV = {
  agentId: 'AGENT_WALLET_AGENT_ID',
  payerKey: 'AGENT_WALLET_PAYER_KEY',
  payerKeyFile: 'AGENT_WALLET_PAYER_KEY_FILE',
  /** Per chain: AGENT_WALLET_RPC_URL_ETHEREUM, _BASE, _ARBITRUM (paying by transfer). */
  rpcUrlPrefix: 'AGENT_WALLET_RPC_URL_',
} as const;

export interface ClientContext {
  client: AgentWalletClient;
  journal: Journal;
  json: boolean;
}

/** The API client of a command: key from AGENT_WALLET_API_KEY, base URL from --base-url or the environment. */
export function clientContext(values: ParsedValues): ClientContext {
  const journal = openJournal();
  return { client: createClient({ baseUrl: str(values, 'base-url'), journal }), journal, json: values.json === true };
}

export const AGENT_OPTIONS: Options = {
  'agent-id': { type: 'string', arg: 'ID', help: `the agent (default: ${ENV.agentId})` },
  chain: { type: 'string', arg: 'CHAIN', help: 'ethereum, base or arbitrum (aliases eth, arb); default ethereum' },
};

export function agentIdOf(values: ParsedValues): string {
  const id = str(values, 'agent-id') ?? process.env[ENV.agentId];
  if (id === undefined || id === '') throw new CliError(`--agent-id is required (or set ${ENV.agentId})`);
  return id;
}

export const PAYER_OPTIONS: Options = {
  'payer-key-file': { type: 'string', arg: 'FILE', help: `file holding the payer's 0x private key (default: ${ENV.payerKeyFile}, or the key itself in ${ENV.payerKey})` },
  method: { type: 'string', arg: 'x402|transfer', help: 'x402: sign, the service settles (no gas); transfer: send the tokens, then prove it. Default: x402 when offered' },
  'pay-token': { type: 'string', arg: 'SYMBOL', help: 'the token to pay with (default: the first accepted one the payer holds enough of)' },
  'rpc-url': { type: 'string', arg: 'URL', help: `the quote's chain's RPC endpoint, for paying by transfer (default: ${ENV.rpcUrlPrefix}<CHAIN>)` },
};

/** The payer when one is configured (the MCP server's is optional: without one, `pay` explains how to pay by hand). */
export function optionalPayer(values: ParsedValues, env: NodeJS.ProcessEnv = process.env): Payer | undefined {
  if (str(values, 'payer-key-file') === undefined && !env[ENV.payerKeyFile] && !env[ENV.payerKey]) return undefined;
  return payerOf(values, env);
}

/** The payer of a 402: a key from a file or the environment; RPC URLs per chain from the environment or --rpc-url. */
export function payerOf(values: ParsedValues, env: NodeJS.ProcessEnv = process.env): Payer {
  const file = str(values, 'payer-key-file') ?? env[ENV.payerKeyFile];
  let key = env[ENV.payerKey];
  if (file !== undefined) {
    try {
      key = readFileSync(file, 'utf8').trim();
    } catch (e) {
      throw new CliError(`cannot read the payer key file ${file}: ${(e as Error).message}`);
    }
  }
  if (key === undefined || key === '') throw new CliError(`no payer: pass --payer-key-file, or set ${ENV.payerKeyFile} or ${ENV.payerKey}`);
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new CliError('the payer key must be a 0x-prefixed 32-byte hex private key');
  const rpcUrls: Partial<Record<ChainName, string>> = {};
  for (const chain of CHAIN_NAMES) {
    const url = env[`${ENV.rpcUrlPrefix}${chain.toUpperCase()}`];
    if (url) rpcUrls[chain] = url;
  }
  // --rpc-url names the endpoint of the quote's chain, whichever it turns out to be.
  return { account: privateKeyToAccount(key as `0x${string}`), rpcUrls, rpcUrl: str(values, 'rpc-url') };
}

export function methodOf(values: ParsedValues): 'x402' | 'transfer' | undefined {
  const m = str(values, 'method');
  if (m === undefined || m === 'x402' || m === 'transfer') return m;
  throw new CliError(`--method must be x402 or transfer, got ${m}`);
}

/**
 * The address a command sends to: `--address`, else the smart wallet of `--agent-id` (or the agent id in the
 * environment) under the caller's key, resolved through GET /wallet; a refusal of that lookup is given back.
 */
export async function recipientOf(
  values: ParsedValues,
  chain: string | undefined,
): Promise<{ ok: true; address: string } | { ok: false; error: Parameters<typeof printError>[0] }> {
  const address = str(values, 'address');
  if (address !== undefined) return { ok: true, address };
  const agentId = str(values, 'agent-id') ?? process.env[ENV.agentId];
  if (!agentId) throw new CliError(`give --agent-id (or ${ENV.agentId}) or --address`);
  const wallet = await clientContext(values).client.wallet(agentId, chain);
  return wallet.ok ? { ok: true, address: wallet.value.smart_wallet_address } : { ok: false, error: wallet.error };
}
