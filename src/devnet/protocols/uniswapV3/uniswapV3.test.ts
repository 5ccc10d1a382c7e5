import { randomBytes } from 'node:crypto';
import { describe, expect, onTestFinished, test } from 'vitest';
import { concat, parseUnits, toFunctionSignature, type Abi, type AbiFunction, type Address } from 'viem';
import { newPayer } from '../../../../test/support/payer.ts';
import { testDevnet } from '../../../../test/support/env.ts';
import { CHAIN_IDS } from '../../../config/chains.ts';
import { UniswapV3ConfigSchema } from '../../../protocols/uniswapV3/config.ts';
import { ANVIL_ACCOUNT_COUNT, devnetAccounts } from '../../accounts.ts';
import { startAnvil } from '../../anvil.ts';
import { devnetChain, devnetPublicClient, devnetWalletClient } from '../../clients.ts';
import { CREATE2_DEPLOYER, testStablecoinAbi } from '../../contracts.ts';
import { deployChain } from '../../deploy.ts';
import type { ProtocolDeployContext } from '../types.ts';
import { UNISWAP_ARTIFACTS } from '../uniswap/artifacts.ts';
import { Q96 } from '../uniswap/math.ts';
import { quoterV2Abi, swapRouter02Abi, uniswapV3Contracts, v3FactoryAbi, v3PoolAbi, v3PoolAddress, v3PositionManagerAbi, v3Pools, type V3PoolPlan } from './index.ts';
import { uniswapV3 } from './index.ts';

const devnet = testDevnet();
const ethereum = devnet.chain('ethereum');
const client = devnet.publicClient('ethereum');
const protocolDeployer = devnet.manifest.accounts.protocolDeployer!;
const config = UniswapV3ConfigSchema.parse(ethereum.protocols?.uniswapV3);
const token = (symbol: string) => ethereum.tokens.find((t) => t.symbol === symbol)!;
const usdc = token('USDC');
const weth = token('WETH');
const usdt = token('USDT');

/** token1 per token0 in whole tokens, from a pool's sqrtPriceX96 (float: for checking a price, not computing one). */
function wholePrice(sqrtPriceX96: bigint, decimals0: number, decimals1: number): number {
  const raw = Number(sqrtPriceX96) / Number(Q96);
  return raw * raw * 10 ** (decimals0 - decimals1);
}

/** USDC per whole WETH or USDT at a pool's price. */
function usdcPer(p: V3PoolPlan, sqrtPriceX96: bigint): number {
  const price = wholePrice(sqrtPriceX96, p.token0.decimals, p.token1.decimals);
  return p.token0.symbol === 'USDC' ? 1 / price : price;
}

const deployCtx = (chain: ProtocolDeployContext['chain'], log: (line: string) => void = () => {}): ProtocolDeployContext => ({
  chain,
  name: 'ethereum',
  deployer: protocolDeployer,
  funded: devnet.manifest.accounts.funded,
  tokens: ethereum.tokens,
  log,
});

describe('Uniswap v3 on the devnet ethereum chain', () => {
  test('the configuration names the contracts at their CREATE2 addresses and the four pools', async () => {
    const contracts = uniswapV3Contracts(weth.address);
    expect(config).toEqual({
      factory: contracts.factory.address,
      swapRouter02: contracts.swapRouter02.address,
      quoterV2: contracts.quoterV2.address,
      positionManager: contracts.positionManager.address,
      weth: weth.address,
      pools: [
        { tokenA: usdc.address, tokenB: weth.address, fee: 500 },
        { tokenA: usdc.address, tokenB: weth.address, fee: 3000 },
        { tokenA: usdc.address, tokenB: usdt.address, fee: 500 },
        { tokenA: usdc.address, tokenB: usdt.address, fee: 3000 },
      ],
    });
    // The factory's owner is the CREATE2 deployer (its msg.sender): the three constructor tiers are all there is.
    expect((await client.readContract({ address: config.factory, abi: v3FactoryAbi, functionName: 'owner' })).toLowerCase()).toBe(CREATE2_DEPLOYER.toLowerCase());
    for (const [fee, spacing] of [[500, 10], [3000, 60], [10000, 200], [100, 0]] as const) {
      expect(await client.readContract({ address: config.factory, abi: v3FactoryAbi, functionName: 'feeAmountTickSpacing', args: [fee] })).toBe(spacing);
    }
    expect(await client.readContract({ address: config.positionManager, abi: v3PositionManagerAbi, functionName: 'WETH9' })).toBe(weth.address);
    expect(await client.readContract({ address: config.swapRouter02, abi: swapRouter02Abi, functionName: 'positionManager' })).toBe(config.positionManager);
    const plans = v3Pools(ethereum.tokens, config.factory);
    for (const [i, p] of config.pools.entries()) {
      // The periphery's POOL_INIT_CODE_HASH gives the address the factory deployed.
      const address = await client.readContract({ address: config.factory, abi: v3FactoryAbi, functionName: 'getPool', args: [p.tokenA, p.tokenB, p.fee] });
      expect(address).toBe(plans[i]!.address);
      expect(await client.readContract({ address, abi: v3PoolAbi, functionName: 'liquidity' })).toBeGreaterThan(0n);
      const [sqrtPriceX96] = await client.readContract({ address, abi: v3PoolAbi, functionName: 'slot0' });
      // Other test files swap here too (one moves the USDC/USDT 0.3 % pool about 4 %): near the start price, not at it.
      expect(Math.abs(usdcPer(plans[i]!, sqrtPriceX96) / (plans[i]!.tokenB.symbol === 'WETH' ? 3000 : 1) - 1)).toBeLessThan(0.1);
    }
  });

  test('the typed ABIs say what the artifacts have', () => {
    const check = (typed: Abi, compiled: unknown[]) => {
      const fns = (compiled as Abi).filter((x): x is AbiFunction => x.type === 'function');
      for (const item of typed.filter((x): x is AbiFunction => x.type === 'function')) {
        const match = fns.find((f) => toFunctionSignature(f) === toFunctionSignature(item));
        expect(match, toFunctionSignature(item)).toBeDefined();
        expect(match!.outputs.map((o) => o.type)).toEqual(item.outputs.map((o) => o.type));
      }
    };
    check(v3FactoryAbi, UNISWAP_ARTIFACTS.factory.abi);
    check(v3PoolAbi, UNISWAP_ARTIFACTS.pool.abi);
    check(v3PositionManagerAbi, UNISWAP_ARTIFACTS.positionManager.abi);
    check(swapRouter02Abi, UNISWAP_ARTIFACTS.swapRouter02.abi);
    check(quoterV2Abi, UNISWAP_ARTIFACTS.quoterV2.abi);
  });

  test("QuoterV2's quote is what SwapRouter02's exactInputSingle pays out (USDC → USDT, read from balances)", async () => {
    const user = await newPayer(devnet, 'ethereum');
    const me = user.address;
    const amountIn = parseUnits('3000', usdc.decimals);
    await user.mint('USDC', me, amountIn);
    await user.wallet.writeContractSync({ address: usdc.address, abi: testStablecoinAbi, functionName: 'approve', args: [config.swapRouter02, amountIn], throwOnReceiptRevert: true });
    const balance = (t: Address) => client.readContract({ address: t, abi: testStablecoinAbi, functionName: 'balanceOf', args: [me] });
    // The USDC/USDT 0.05 % pool: no other test trades in it, so nothing moves it between the quote and the swap.
    const pool = v3PoolAddress(config.factory, usdc.address, usdt.address, 500);
    const [priceBefore] = await client.readContract({ address: pool, abi: v3PoolAbi, functionName: 'slot0' });

    const params = { tokenIn: usdc.address, tokenOut: usdt.address, amountIn, fee: 500, sqrtPriceLimitX96: 0n };
    const { result: quote } = await client.simulateContract({ account: me, address: config.quoterV2, abi: quoterV2Abi, functionName: 'quoteExactInputSingle', args: [params] });
    const [amountOut] = quote;
    // ≈ 3,000 USDT less the 0.05 % fee.
    expect(Number(amountOut) / 1e6).toBeGreaterThan(2990);
    expect(Number(amountOut) / 1e6).toBeLessThan(3000);

    const [usdcBefore, usdtBefore] = await Promise.all([balance(usdc.address), balance(usdt.address)]);
    const receipt = await user.wallet.writeContractSync({
      address: config.swapRouter02,
      abi: swapRouter02Abi,
      functionName: 'exactInputSingle',
      args: [{ tokenIn: usdc.address, tokenOut: usdt.address, fee: 500, recipient: me, amountIn, amountOutMinimum: amountOut, sqrtPriceLimitX96: 0n }],
      throwOnReceiptRevert: true,
    });
    expect(receipt.status).toBe('success');
    expect(usdcBefore - (await balance(usdc.address))).toBe(amountIn);
    expect((await balance(usdt.address)) - usdtBefore).toBe(amountOut);
    // The pool is deep: 3,000 USDC moves its price well under 1 %.
    const [priceAfter] = await client.readContract({ address: pool, abi: v3PoolAbi, functionName: 'slot0' });
    const moved = Math.abs(Number(priceAfter) ** 2 / Number(priceBefore) ** 2 - 1);
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThan(0.001);
  });

  test('deploying again on the same chain sends nothing and returns the same config', async () => {
    const lines: string[] = [];
    const height = await client.getBlockNumber();
    const result = await uniswapV3.deploy(deployCtx(devnetChain(ethereum), (l) => lines.push(l)));
    expect(result.deployed).toEqual([]);
    expect(result.config).toEqual(ethereum.protocols?.uniswapV3);
    expect(await client.getBlockNumber()).toBe(height);
    expect(lines).toEqual([]);
  });
});

test('a fresh chain gets the same addresses, each pool at its start price, and a second deployment sends nothing', async () => {
  const node = await startAnvil({ chainId: CHAIN_IDS.ethereum, marker: `uniswap-v3-test-${randomBytes(4).toString('hex')}`, accounts: ANVIL_ACCOUNT_COUNT });
  onTestFinished(() => node.stop());
  const chain = devnetChain({ chainId: node.chainId, name: 'ethereum', rpcUrl: node.rpcUrl });
  await deployChain({ chain, accounts: devnetAccounts(), log: () => {} });
  // The deployer's nonce must not matter.
  const deployerWallet = devnetWalletClient(chain, protocolDeployer.privateKey);
  for (let i = 0; i < 2; i++) await deployerWallet.sendTransactionSync({ to: protocolDeployer.address, value: 0n });

  // A deployment cut short after the factory: the next one does the rest, and only the rest.
  const { factory } = uniswapV3Contracts(weth.address);
  await deployerWallet.sendTransactionSync({ to: CREATE2_DEPLOYER, data: concat([factory.salt, factory.initCode]) });

  const full = await uniswapV3.deploy(deployCtx(chain));
  expect(full.config).toEqual(config);
  expect(full.deployed.slice(0, 5)).toEqual(['NFTDescriptor', 'NonfungibleTokenPositionDescriptor', 'NonfungiblePositionManager', 'SwapRouter02', 'QuoterV2']);
  expect(full.deployed).toHaveLength(19);
  const fresh = devnetPublicClient(chain);
  for (const p of v3Pools(ethereum.tokens, config.factory)) {
    const [sqrtPriceX96] = await fresh.readContract({ address: p.address, abi: v3PoolAbi, functionName: 'slot0' });
    expect(sqrtPriceX96, p.label).toBe(p.sqrtPriceX96);
    expect(usdcPer(p, sqrtPriceX96), p.label).toBeCloseTo(p.tokenB.symbol === 'WETH' ? 3000 : 1, 6);
    expect(await fresh.readContract({ address: p.address, abi: v3PoolAbi, functionName: 'liquidity' }), p.label).toBeGreaterThan(0n);
  }
  const height = await fresh.getBlockNumber();
  expect((await uniswapV3.deploy(deployCtx(chain))).deployed).toEqual([]);
  expect(await fresh.getBlockNumber()).toBe(height);
});
