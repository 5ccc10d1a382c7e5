import { concat, encodeFunctionData, zeroHash, type Address, type PublicClient } from 'viem';
import { devnetPublicClient } from '../../clients.ts';
import { CREATE2_DEPLOYER } from '../../contracts.ts';
import { sendInOrder, type PlannedTransaction } from '../sender.ts';
import type { ProtocolDeployContext, ProtocolDeployResult } from '../types.ts';
import { fundAndApprove, tokenOf, type DevnetToken } from '../uniswap/seeding.ts';
import { uniswapV3Contracts } from '../uniswapV3/contracts.ts';
import { modifyLiquidityRouterAbi, poolManagerAbi, stateViewAbi, uniswapV4Contracts, V4_CONTRACT_KEYS, type UniswapV4Contracts } from './contracts.ts';
import { v4Pools, type V4PoolPlan } from './pools.ts';

interface V4State {
  code: Record<(typeof V4_CONTRACT_KEYS)[number], boolean>;
  /** Per pool of the plan (read through StateView): its price (0: not initialized) and in-range liquidity. */
  pools: { sqrtPriceX96: bigint; liquidity: bigint }[];
}

const hasCode = async (client: PublicClient, address: Address): Promise<boolean> => ((await client.getCode({ address })) ?? '0x') !== '0x';

async function readState(client: PublicClient, contracts: UniswapV4Contracts, pools: readonly V4PoolPlan[]): Promise<V4State> {
  const codes = await Promise.all(V4_CONTRACT_KEYS.map((k) => hasCode(client, contracts[k].address)));
  const code = Object.fromEntries(V4_CONTRACT_KEYS.map((k, i) => [k, codes[i]!])) as V4State['code'];
  // StateView reads the PoolManager's storage: both must be there (a call to no code is an error in viem).
  const readable = code.poolManager && code.stateView;
  const poolStates = await Promise.all(
    pools.map(async (p) => {
      if (!readable) return { sqrtPriceX96: 0n, liquidity: 0n };
      const at = contracts.stateView.address;
      const [slot0, liquidity] = await Promise.all([
        client.readContract({ address: at, abi: stateViewAbi, functionName: 'getSlot0', args: [p.id] }),
        client.readContract({ address: at, abi: stateViewAbi, functionName: 'getLiquidity', args: [p.id] }),
      ]);
      return { sqrtPriceX96: slot0[0], liquidity };
    }),
  );
  return { code, pools: poolStates };
}

function missingParts(state: V4State, contracts: UniswapV4Contracts, pools: readonly V4PoolPlan[]): string[] {
  const missing = V4_CONTRACT_KEYS.filter((k) => !state.code[k]).map((k) => `${contracts[k].label} (no code at ${contracts[k].address})`);
  pools.forEach((p, i) => {
    if (state.pools[i]!.sqrtPriceX96 === 0n) missing.push(`pool ${p.label} initialized (${p.id})`);
    if (state.pools[i]!.liquidity === 0n) missing.push(`liquidity in ${p.label}`);
  });
  return missing;
}

/**
 * Brings Uniswap v4 on one chain to the devnet's expected state, doing only what is missing (a reload sends
 * nothing): the PoolManager, StateView, V4Quoter, v4-core's PoolModifyLiquidityTest router (what seeds the
 * pools), Permit2 and the UniversalRouter through the CREATE2 deployer (contracts.ts); the pools initialized at
 * their price and each seeded with one full-range position through the router (pools.ts: native ETH sent along).
 */
export async function deployUniswapV4(ctx: ProtocolDeployContext): Promise<ProtocolDeployResult<'uniswapV4'>> {
  const started = performance.now();
  const client = devnetPublicClient(ctx.chain);
  const deployer = ctx.deployer.address;
  const weth = tokenOf(ctx.tokens, 'WETH');
  const v3 = uniswapV3Contracts(weth.address);
  const contracts = uniswapV4Contracts({ owner: deployer, weth: weth.address, v3Factory: v3.factory.address, v3PositionManager: v3.positionManager.address });
  const pools = v4Pools(ctx.tokens);
  const config = {
    poolManager: contracts.poolManager.address,
    universalRouter: contracts.universalRouter.address,
    permit2: contracts.permit2.address,
    v4Quoter: contracts.v4Quoter.address,
    stateView: contracts.stateView.address,
    pools: pools.map((p) => p.key),
  };

  const state = await readState(client, contracts, pools);
  if (missingParts(state, contracts, pools).length === 0) return { deployed: [], config };
  if (V4_CONTRACT_KEYS.some((k) => !state.code[k]) && !(await hasCode(client, CREATE2_DEPLOYER))) {
    throw new Error(`${ctx.name}: uniswapV4: no CREATE2 deployer at ${CREATE2_DEPLOYER}`);
  }

  const txs: PlannedTransaction[] = [];
  for (const k of V4_CONTRACT_KEYS) {
    if (!state.code[k]) txs.push({ what: contracts[k].label, to: CREATE2_DEPLOYER, data: concat([contracts[k].salt, contracts[k].initCode]) });
  }
  pools.forEach((p, i) => {
    if (state.pools[i]!.sqrtPriceX96 !== 0n) return;
    txs.push({
      what: `pool ${p.label}`,
      to: contracts.poolManager.address,
      data: encodeFunctionData({ abi: poolManagerAbi, functionName: 'initialize', args: [p.key, p.sqrtPriceX96] }),
    });
  });
  const unseeded = pools.filter((_, i) => state.pools[i]!.liquidity === 0n);
  const router = contracts.modifyLiquidityRouter.address;
  const needs = new Map<DevnetToken, bigint>();
  for (const p of unseeded) {
    for (const [c, amount] of [[p.currency0, p.amount0], [p.currency1, p.amount1]] as const) {
      if (c.symbol !== 'ETH') needs.set(c as DevnetToken, (needs.get(c as DevnetToken) ?? 0n) + amount);
    }
  }
  txs.push(...(await fundAndApprove(client, deployer, router, [...needs].map(([token, amount]) => ({ token, amount })))));
  for (const p of unseeded) {
    txs.push({
      what: `liquidity in ${p.label}`,
      to: router,
      data: encodeFunctionData({
        abi: modifyLiquidityRouterAbi,
        functionName: 'modifyLiquidity',
        args: [p.key, { tickLower: p.tickLower, tickUpper: p.tickUpper, liquidityDelta: p.liquidity, salt: zeroHash }, '0x'],
      }),
      // The native side (currency0 is ETH when present): the router returns what the pool did not take.
      ...(p.currency0.symbol === 'ETH' && { value: p.amount0 }),
    });
  }
  await sendInOrder(client, ctx.chain, ctx.deployer, txs, 'uniswapV4');

  const missing = missingParts(await readState(client, contracts, pools), contracts, pools);
  if (missing.length > 0) throw new Error(`${ctx.name}: uniswapV4: still missing after deployment: ${missing.join('; ')}`);
  ctx.log(`${ctx.name}: uniswapV4: deployed ${txs.map((t) => t.what).join(', ')} in ${Math.round(performance.now() - started)} ms`);
  return { deployed: txs.map((t) => t.what), config };
}
