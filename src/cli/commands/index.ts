import type { Command } from '../command.ts';
import { balanceCommand } from './balance.ts';
import { cancelCommand } from './cancel.ts';
import { executeCommand } from './execute.ts';
import { faucetCommand } from './faucet.ts';
import { feedCommand } from './feed.ts';
import { mcpCommand } from './mcp.ts';
import { payCommand } from './pay.ts';
import { protocolsCommand } from './protocols.ts';
import { simulateCommand } from './simulate.ts';
import { statusCommand } from './status.ts';
import { walletCommand } from './wallet.ts';

/** The agents' commands, in the order the help lists them. */
export const CLIENT_COMMANDS: readonly Command[] = [
  walletCommand,
  balanceCommand,
  simulateCommand,
  executeCommand,
  statusCommand,
  cancelCommand,
  payCommand,
  feedCommand,
  faucetCommand,
  protocolsCommand,
  mcpCommand,
];
