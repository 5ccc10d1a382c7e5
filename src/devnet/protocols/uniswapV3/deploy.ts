import { concat, encodeFunctionData, maxUint256, type Address, type PublicClient } from 'viem';
import { devnetPublicClient } from '../../clients.ts';
import { CREATE2_DEPLOYER } from '../../contracts.ts';
import { sendInOrder, type PlannedTransaction } from '../sender.ts';
import type { ProtocolDeployContext, ProtocolDeployResult } from '../types.ts';
import { fundAndApprove, tokenOf, type DevnetToken } from '../uniswap/seeding.ts';
import { uniswapV3Contracts, v3PoolAbi, v3PositionManagerAbi, V3_CONTRACT_KEYS, type UniswapV3Contracts } from './contracts.ts';
import { v3Pools, type V3PoolPlan } from './pools.ts';

/** What a chain has of the devnet's v3 deployment (one round of parallel reads). */
interface V3State {
  code: Record<(typeof V3_CONTRACT_KEYS)[number], boolean>;
  /** Per pool of the plan: its start price (0: not created or not initialized) and its in-range liquidity. */
  pools: { sqrtPriceX96: bigint; liquidity: bigint }[];
}

const hasCode = async (client: PublicClient, address: Address): Promise<boolean> => ((await client.getCode({ address })) ?? '0x') !== '0x';

async function readState(client: PublicClient, contracts: UniswapV3Contracts, pools: readonly V3PoolPlan[]): Promise<V3State> {
  const [codes, poolStates] = await Promise.all([
    Promise.all(V3_CONTRACT_KEYS.map((k) => hasCode(client, contracts[k].address))),
    Promise.all(
      pools.map(async (p) => {
        // A call to an address without code answers no data, which viem reports as an error: read only what exists.
        if (!(await hasCode(client, p.address))) return { sqrtPriceX96: 0n, liquidity: 0n };
        const [slot0, liquidity] = await Promise.all([
          client.readContract({ address: p.address, abi: v3PoolAbi, functionName: 'slot0' }),
          client.readContract({ address: p.address, abi: v3PoolAbi, functionName: 'liquidity' }),
        ]);
        return { sqrtPriceX96: slot0[0], liquidity };
      }),
    ),
  ]);
  return { code: Object.fromEntries(V3_CONTRACT_KEYS.map((k, i) => [k, codes[i]!])) as V3State['code'], pools: poolStates };
}

function missingParts(state: V3State, contracts: UniswapV3Contracts, pools: readonly V3PoolPlan[]): string[] {
  const missing = V3_CONTRACT_KEYS.filter((k) => !state.code[k]).map((k) => `${contracts[k].label} (no code at ${contracts[k].address})`);
  pools.forEach((p, i) => {
    if (state.pools[i]!.sqrtPriceX96 === 0n) missing.push(`pool ${p.label} initialized (${p.address})`);
    if (state.pools[i]!.liquidity === 0n) missing.push(`liquidity in ${p.label}`);
  });
  return missing;
}

/**
 * Brings Uniswap v3 on one chain to the devnet's expected state, doing only what is missing (a reload sends
 * nothing): the factory and periphery through the CREATE2 deployer (contracts.ts), the pools created and
 * initialized at their price through the position manager, and each seeded with one full-range position minted
 * by the protocol deployer (pools.ts). All transactions are planned from one read and sent in order.
 */
export async function deployUniswapV3(ctx: ProtocolDeployContext): Promise<ProtocolDeployResult<'uniswapV3'>> {
  const started = performance.now();
  const client = devnetPublicClient(ctx.chain);
  const deployer = ctx.deployer.address;
  const weth = tokenOf(ctx.tokens, 'WETH');
  const contracts = uniswapV3Contracts(weth.address);
  const pools = v3Pools(ctx.tokens, contracts.factory.address);
  const config = {
    factory: contracts.factory.address,
    swapRouter02: contracts.swapRouter02.address,
    quoterV2: contracts.quoterV2.address,
    positionManager: contracts.positionManager.address,
    weth: weth.address,
    pools: pools.map((p) => ({ tokenA: p.tokenA.address, tokenB: p.tokenB.address, fee: p.fee })),
  };

  const state = await readState(client, contracts, pools);
  if (missingParts(state, contracts, pools).length === 0) return { deployed: [], config };
  if (V3_CONTRACT_KEYS.some((k) => !state.code[k]) && !(await hasCode(client, CREATE2_DEPLOYER))) {
    throw new Error(`${ctx.name}: uniswapV3: no CREATE2 deployer at ${CREATE2_DEPLOYER}`);
  }

  const txs: PlannedTransaction[] = [];
  for (const k of V3_CONTRACT_KEYS) {
    if (!state.code[k]) txs.push({ what: contracts[k].label, to: CREATE2_DEPLOYER, data: concat([contracts[k].salt, contracts[k].initCode]) });
  }
  const npm = contracts.positionManager.address;
  pools.forEach((p, i) => {
    if (state.pools[i]!.sqrtPriceX96 !== 0n) return;
    txs.push({
      what: `pool ${p.label}`,
      to: npm,
      data: encodeFunctionData({
        abi: v3PositionManagerAbi,
        functionName: 'createAndInitializePoolIfNecessary',
        args: [p.token0.address, p.token1.address, p.fee, p.sqrtPriceX96],
      }),
    });
  });
  const unseeded = pools.filter((_, i) => state.pools[i]!.liquidity === 0n);
  const needs = new Map<DevnetToken, bigint>();
  for (const p of unseeded) {
    needs.set(p.token0, (needs.get(p.token0) ?? 0n) + p.amount0);
    needs.set(p.token1, (needs.get(p.token1) ?? 0n) + p.amount1);
  }
  txs.push(...(await fundAndApprove(client, deployer, npm, [...needs].map(([token, amount]) => ({ token, amount })))));
  for (const p of unseeded) {
    txs.push({
      what: `liquidity in ${p.label}`,
      to: npm,
      data: encodeFunctionData({
        abi: v3PositionManagerAbi,
        functionName: 'mint',
        args: [
          {
            token0: p.token0.address,
            token1: p.token1.address,
            fee: p.fee,
            tickLower: p.tickLower,
            tickUpper: p.tickUpper,
            amount0Desired: p.amount0,
            amount1Desired: p.amount1,
            amount0Min: 0n,
            amount1Min: 0n,
            recipient: deployer,
            deadline: maxUint256,
          },
        ],
      }),
    });
  }
  await sendInOrder(client, ctx.chain, ctx.deployer, txs, 'uniswapV3');

  const missing = missingParts(await readState(client, contracts, pools), contracts, pools);
  if (missing.length > 0) throw new Error(`${ctx.name}: uniswapV3: still missing after deployment: ${missing.join('; ')}`);
  ctx.log(`${ctx.name}: uniswapV3: deployed ${txs.map((t) => t.what).join(', ')} in ${Math.round(performance.now() - started)} ms`);
  return { deployed: txs.map((t) => t.what), config };
}
