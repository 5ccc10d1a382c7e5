import type { AnyTool } from '../tool.ts';
import { cancelRequest } from './cancelRequest.ts';
import { checkPolicy } from './checkPolicy.ts';
import { execute } from './execute.ts';
import { getBalance } from './getBalance.ts';
import { getStatus } from './getStatus.ts';
import { getWallet } from './getWallet.ts';
import { getPaymentQuote, pay } from './payment.ts';
import { recentFeed } from './recentFeed.ts';
import { simulate } from './simulate.ts';

/** The core tools, in the order a model meets them; the protocol families add theirs (src/protocols). */
export const CORE_TOOLS: readonly AnyTool[] = [getWallet, getBalance, simulate, execute, getStatus, cancelRequest, getPaymentQuote, pay, recentFeed, checkPolicy];
