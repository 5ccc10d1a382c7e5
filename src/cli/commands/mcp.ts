import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { CliError } from '../../lib/args.ts';
import { createClient } from '../../client/client.ts';
import { openJournal } from '../../client/journal.ts';
import { serveMcpHttp } from '../../mcp/http.ts';
import { createServerFactory } from '../../mcp/server.ts';
import { bool, str, type Command } from '../command.ts';
import { optionalPayer, PAYER_OPTIONS } from '../context.ts';

export const mcpCommand: Command = {
  name: 'mcp',
  summary: 'the MCP tool server for agents (stdio, or streamable HTTP with --http)',
  usage: 'mcp [--http [--port N] [--host H]] [--payer-key-file FILE]',
  description:
    'Serves agent-wallet as MCP tools (docs/mcp.md): get_wallet, get_balance, simulate, execute, get_status, get_payment_quote,\n' +
    'pay, recent_feed. A client of the HTTP API: AGENT_WALLET_API_KEY and AGENT_WALLET_BASE_URL say which service and key.\n' +
    'Over stdio by default (what an MCP host spawns); --http serves streamable HTTP at /mcp. With a payer key (AGENT_WALLET_PAYER_KEY\n' +
    'or --payer-key-file), the pay tool pays 402 quotes. Logs go to stderr: stdout is the protocol.',
  options: {
    http: { type: 'boolean', help: 'serve streamable HTTP at http://HOST:PORT/mcp instead of stdio' },
    port: { type: 'string', arg: 'N', help: 'HTTP port (default 8091; 0 picks a free one)' },
    host: { type: 'string', arg: 'H', help: 'HTTP address (default 127.0.0.1; off loopback AGENT_WALLET_MCP_TOKEN is required)' },
    ...PAYER_OPTIONS,
  },
  examples: ['AGENT_WALLET_API_KEY=aw_… agent-wallet mcp', 'agent-wallet mcp --http --port 8091'],
  async run(values) {
    const journal = openJournal();
    const deps = { client: createClient({ baseUrl: str(values, 'base-url'), journal }), journal, payer: optionalPayer(values) };
    const factory = createServerFactory(deps);
    if (!bool(values, 'http')) {
      serveStdio(factory);
      process.stderr.write(`agent-wallet mcp: serving on stdio for ${deps.client.baseUrl}${deps.payer ? `, payer ${deps.payer.account.address}` : ''}\n`);
      return 0; // the process lives while stdin is open
    }
    const port = Number(str(values, 'port') ?? 8091);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`invalid --port ${str(values, 'port')}`);
    let running;
    try {
      running = await serveMcpHttp(factory, { host: str(values, 'host') ?? '127.0.0.1', port, bearerToken: process.env.AGENT_WALLET_MCP_TOKEN });
    } catch (e) {
      throw new CliError((e as Error).message);
    }
    process.stderr.write(`agent-wallet mcp: serving streamable HTTP on ${running.url} for ${deps.client.baseUrl}\n`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await running.close();
    return 0;
  },
};
