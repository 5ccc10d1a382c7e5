import { zeroAddress } from 'viem';
import { z } from 'zod';
import { ChainOut } from '../../../api/http/index.ts';
import { agentQueryFields } from '../../common/inputs.ts';
import { readOf } from '../../common/reads.ts';
import type { AgentContext } from '../../types.ts';
import { readerAbi } from '../abis.generated.ts';
import type { GmxV2Config } from '../config.ts';
import { CHAINS, defineRead } from '../define.ts';
import { PositionSchema, presentPosition, type ReaderPositionInfo } from '../present.ts';
import { snapshot, type Snapshot } from '../snapshot.ts';

/** The most positions one read lists (GMX pages the account's position list). */
const POSITIONS_PAGE = 100n;

/** The wallet's positions in the served markets as the Reader gives them (getAccountPositionInfoList, at the oracle's prices). */
export async function positionInfos(ctx: AgentContext<'gmxV2'>, snap: Snapshot): Promise<readonly ReaderPositionInfo[]> {
  const config = ctx.config as GmxV2Config;
  if (snap.perp.length === 0) return [];
  const [infos] = await ctx.read([
    readOf({
      address: config.reader,
      abi: readerAbi,
      functionName: 'getAccountPositionInfoList',
      args: [config.dataStore, config.referralStorage, ctx.wallet, snap.perp.map((m) => m.address), snap.perp.map((m) => m.contractPrices), zeroAddress, 0n, POSITIONS_PAGE],
    }),
  ]);
  return infos as readonly ReaderPositionInfo[];
}

/** The wallet's positions in the served markets, each with its figures at the current prices. */
export async function walletPositions(ctx: AgentContext<'gmxV2'>, snap: Snapshot): Promise<z.infer<typeof PositionSchema>[]> {
  return (await positionInfos(ctx, snap)).flatMap((info) => {
    const m = snap.perp.find((x) => x.address.toLowerCase() === info.position.addresses.market.toLowerCase());
    return m && info.position.numbers.sizeInUsd > 0n ? [presentPosition(m, info)] : [];
  });
}

export const positions = defineRead({
  path: 'positions',
  summary: "The wallet's open positions: size, collateral, entry price, PnL, fees, liquidation price",
  description:
    "The agent's open GMX v2 positions at the oracle keeper's prices now: size, collateral, entry and mark price, PnL before and after " +
    'fees, pending funding and borrowing fees, the closing fee, net value, leverage, the liquidation price, and the funding it may claim. ' +
    "Computed from GMX's Reader the way GMX's own SDK computes them.",
  query: z.object(agentQueryFields(CHAINS)),
  output: z.object({ agent_id: z.string(), chain: ChainOut, wallet: z.string(), positions: z.array(PositionSchema) }),
  agent: true,
  async run(ctx) {
    const snap = await snapshot(ctx);
    return { agent_id: ctx.agentId, chain: ctx.chain, wallet: ctx.wallet, positions: await walletPositions(ctx, snap) };
  },
});
