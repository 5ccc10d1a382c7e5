import { McpServer } from '@modelcontextprotocol/server';
import { readFileSync } from 'node:fs';
import { registerTool, type AnyTool, type ToolDeps } from './tool.ts';
import { CORE_TOOLS } from './tools/index.ts';
import { protocolTools } from './tools/protocols.ts';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export const MCP_INSTRUCTIONS =
  'agent-wallet executes EVM transactions for you through your own ERC-4337 smart wallet (one per agent_id). ' +
  'Typical flow: get_wallet (where to send funds) → simulate (optional) → execute (answers a request_id) → get_status with ' +
  'wait_seconds until confirmed, reverted or failed. If execute fails with payment_required, get_payment_quote says what to pay ' +
  'and pay pays it when this server has a payer. Chains: ethereum, base, arbitrum (test networks). Amounts are raw integer strings. ' +
  'DeFi protocols have two tools each, named by the spec\'s slug (lend_b_v3_read, lend_b_v3_act, …), the endpoint as their action ' +
  'argument; actions take simulate: true to see what they would change (balances, health factor) before executing.';

/**
 * The MCP server of agent-wallet: a client of its HTTP API (key and base URL from the environment), never of its
 * store, so it works against any deployment. One factory: the SDK builds a server per connection (stdio) or per
 * request (streamable HTTP).
 */
export function createServerFactory(deps: ToolDeps, tools: readonly AnyTool[] = [...CORE_TOOLS, ...protocolTools()]): () => McpServer {
  return () => {
    const server = new McpServer({ name: 'agent-wallet', version: VERSION }, { capabilities: { tools: {} }, instructions: MCP_INSTRUCTIONS });
    for (const tool of tools) registerTool(server, deps, tool);
    return server;
  };
}
