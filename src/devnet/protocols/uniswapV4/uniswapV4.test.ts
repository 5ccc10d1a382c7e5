import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, onTestFinished, test } from 'vitest';
import { holdPoolLockPerTest } from '../../../../test/support/poolLock.ts';
import { concat, encodeAbiParameters, hashDomain, maxUint48, parseUnits, toFunctionSignature, zeroAddress, type Abi, type AbiFunction, type Address, type Hex } from 'viem';
import { newPayer } from '../../../../test/support/payer.ts';
import { testDevnet } from '../../../../test/support/env.ts';
import { CHAIN_IDS } from '../../../config/chains.ts';
import { UniswapV4ConfigSchema, type UniswapV4PoolKey } from '../../../protocols/uniswapV4/config.ts';
import { ANVIL_ACCOUNT_COUNT, devnetAccounts } from '../../accounts.ts';
import { startAnvil } from '../../anvil.ts';
import { devnetChain, devnetPublicClient, devnetWalletClient } from '../../clients.ts';
import { CREATE2_DEPLOYER, testStablecoinAbi } from '../../contracts.ts';
import { deployChain } from '../../deploy.ts';
import type { ProtocolDeployContext } from '../types.ts';
import { UNISWAP_ARTIFACTS } from '../uniswap/artifacts.ts';
import { uniswapV3Contracts } from '../uniswapV3/contracts.ts';
import { permit2Abi, poolManagerAbi, stateViewAbi, uniswapV4, uniswapV4Contracts, universalRouterAbi, v4PoolId, v4Pools, v4QuoterAbi } from './index.ts';

const devnet = testDevnet();
const ethereum = devnet.chain('ethereum');
const client = devnet.publicClient('ethereum');
const protocolDeployer = devnet.manifest.accounts.protocolDeployer!;
const config = UniswapV4ConfigSchema.parse(ethereum.protocols?.uniswapV4);
const token = (symbol: string) => ethereum.tokens.find((t) => t.symbol === symbol)!;
const usdc = token('USDC');
const usdt = token('USDT');
const weth = token('WETH');

const deployCtx = (chain: ProtocolDeployContext['chain'], log: (line: string) => void = () => {}): ProtocolDeployContext => ({
  chain,
  name: 'ethereum',
  deployer: protocolDeployer,
  funded: devnet.manifest.accounts.funded,
  tokens: ethereum.tokens,
  log,
});

// The UniversalRouter's encoding (universal-router 2.0.0 Commands.sol; v4-periphery 1.0.3 Actions.sol).
const V4_SWAP = '0x10';
const SWAP_EXACT_IN_SINGLE = 0x06;
const SETTLE_ALL = 0x0c;
const TAKE_ALL = 0x0f;
const POOL_KEY = {
  type: 'tuple',
  components: [
    { name: 'currency0', type: 'address' },
    { name: 'currency1', type: 'address' },
    { name: 'fee', type: 'uint24' },
    { name: 'tickSpacing', type: 'int24' },
    { name: 'hooks', type: 'address' },
  ],
} as const;
/** One exact-input single-pool swap as the router's V4_SWAP input: swap, pay what it owes, take all it is owed. */
function v4SwapExactInSingle(key: UniswapV4PoolKey, zeroForOne: boolean, amountIn: bigint, amountOutMinimum: bigint): Hex {
  const [tokenIn, tokenOut] = zeroForOne ? [key.currency0, key.currency1] : [key.currency1, key.currency0];
  const swap = encodeAbiParameters(
    [{ type: 'tuple', components: [{ name: 'poolKey', ...POOL_KEY }, { name: 'zeroForOne', type: 'bool' }, { name: 'amountIn', type: 'uint128' }, { name: 'amountOutMinimum', type: 'uint128' }, { name: 'hookData', type: 'bytes' }] }],
    [{ poolKey: key, zeroForOne, amountIn, amountOutMinimum, hookData: '0x' }],
  );
  const settle = encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [tokenIn, amountIn]);
  const take = encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [tokenOut, amountOutMinimum]);
  const actions = concat([`0x${SWAP_EXACT_IN_SINGLE.toString(16).padStart(2, '0')}`, `0x${SETTLE_ALL.toString(16).padStart(2, '0')}`, `0x${TAKE_ALL.toString(16).padStart(2, '0')}`]);
  return encodeAbiParameters([{ type: 'bytes' }, { type: 'bytes[]' }], [actions, [swap, settle, take]]);
}


// Its swaps check a quote against the chain in the devnet's shared v4 pools: no other file trades there meanwhile.
holdPoolLockPerTest({ beforeEach, afterEach });

describe('Uniswap v4 on the devnet ethereum chain', () => {
  test('the configuration names the contracts at their CREATE2 addresses and the two pools, each with liquidity near its price', async () => {
    const v3 = uniswapV3Contracts(weth.address);
    const contracts = uniswapV4Contracts({ owner: protocolDeployer.address, weth: weth.address, v3Factory: v3.factory.address, v3PositionManager: v3.positionManager.address });
    expect(config).toEqual({
      poolManager: contracts.poolManager.address,
      universalRouter: contracts.universalRouter.address,
      permit2: contracts.permit2.address,
      v4Quoter: contracts.v4Quoter.address,
      stateView: contracts.stateView.address,
      pools: [
        { currency0: zeroAddress, currency1: usdc.address, fee: 3000, tickSpacing: 60, hooks: zeroAddress },
        BigInt(usdc.address) < BigInt(usdt.address)
          ? { currency0: usdc.address, currency1: usdt.address, fee: 500, tickSpacing: 10, hooks: zeroAddress }
          : { currency0: usdt.address, currency1: usdc.address, fee: 500, tickSpacing: 10, hooks: zeroAddress },
      ],
    });
    expect(await client.readContract({ address: config.poolManager, abi: poolManagerAbi, functionName: 'owner' })).toBe(protocolDeployer.address);
    // PoolManager's via-IR build, under the code size limit (its non-IR .test build is 26,947 bytes).
    expect(((await client.getCode({ address: config.poolManager }))!.length - 2) / 2).toBe(24_009);
    // Permit2's runtime code as v4-periphery carries it, its domain recomputed for this chain and address.
    expect(await client.getCode({ address: config.permit2 })).toBe(UNISWAP_ARTIFACTS.permit2.deployedBytecode);
    const domain = await client.readContract({ address: config.permit2, abi: permit2Abi, functionName: 'DOMAIN_SEPARATOR' });
    expect(domain).toBe(hashDomain({ domain: { name: 'Permit2', chainId: BigInt(CHAIN_IDS.ethereum), verifyingContract: config.permit2 }, types: { EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' }] } }));
    for (const key of config.pools) {
      const id = v4PoolId(key);
      const [sqrtPriceX96, , , lpFee] = await client.readContract({ address: config.stateView, abi: stateViewAbi, functionName: 'getSlot0', args: [id] });
      expect(lpFee).toBe(key.fee);
      expect(await client.readContract({ address: config.stateView, abi: stateViewAbi, functionName: 'getLiquidity', args: [id] })).toBeGreaterThan(0n);
      const raw = (Number(sqrtPriceX96) / 2 ** 96) ** 2; // currency1 per currency0, raw units
      // Other test files swap here too (one moves a price on purpose, a few %): near the start price, not at it.
      const ratio = key.currency0 === zeroAddress ? (raw * 1e18) / 1e6 / 3000 : raw;
      expect(Math.abs(ratio - 1)).toBeLessThan(0.1);
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
    check(poolManagerAbi, UNISWAP_ARTIFACTS.poolManager.abi);
    check(stateViewAbi, UNISWAP_ARTIFACTS.stateView.abi);
    check(v4QuoterAbi, UNISWAP_ARTIFACTS.v4Quoter.abi);
    check(permit2Abi.filter((x) => x.name !== 'DOMAIN_SEPARATOR'), UNISWAP_ARTIFACTS.permit2.abi);
    check(universalRouterAbi, UNISWAP_ARTIFACTS.universalRouter.abi);
  });

  test("V4Quoter's quote is what the UniversalRouter's V4_SWAP pays out, with an on-chain Permit2 allowance (USDC → USDT, from balances)", async () => {
    const user = await newPayer(devnet, 'ethereum');
    const me = user.address;
    const wallet = user.wallet;
    const amountIn = parseUnits('3000', usdc.decimals);
    await user.mint('USDC', me, amountIn);
    const key = config.pools.find((k) => k.fee === 500)!;
    const zeroForOne = key.currency0 === usdc.address;
    const balance = (t: Address) => client.readContract({ address: t, abi: testStablecoinAbi, functionName: 'balanceOf', args: [me] });

    const { result } = await client.simulateContract({
      account: me,
      address: config.v4Quoter,
      abi: v4QuoterAbi,
      functionName: 'quoteExactInputSingle',
      args: [{ poolKey: key, zeroForOne, exactAmount: amountIn, hookData: '0x' }],
    });
    const [amountOut] = result;
    // 3,000 USDT less the 0.05 % fee (1.5) and the price impact on 10 M a side (≈ 0.03 %, ≈ 0.9).
    expect(amountOut).toBeGreaterThan(parseUnits('2996', 6));
    expect(amountOut).toBeLessThan(amountIn);

    // Exact amounts, never unlimited: the token lets Permit2 take amountIn, Permit2 lets the router take it.
    const mined = { throwOnReceiptRevert: true } as const;
    await wallet.writeContractSync({ address: usdc.address, abi: testStablecoinAbi, functionName: 'approve', args: [config.permit2, amountIn], ...mined });
    const expiration = Math.floor(Date.now() / 1000) + 3600;
    await wallet.writeContractSync({ address: config.permit2, abi: permit2Abi, functionName: 'approve', args: [usdc.address, config.universalRouter, amountIn, expiration], ...mined });
    expect(await client.readContract({ address: config.permit2, abi: permit2Abi, functionName: 'allowance', args: [me, usdc.address, config.universalRouter] })).toEqual([amountIn, expiration, 0]);
    expect(expiration).toBeLessThan(Number(maxUint48));

    const [usdcBefore, usdtBefore] = await Promise.all([balance(usdc.address), balance(usdt.address)]);
    const deadline = BigInt(Math.floor(Date.now() / 1000) + 600);
    await wallet.writeContractSync({
      address: config.universalRouter,
      abi: universalRouterAbi,
      functionName: 'execute',
      args: [V4_SWAP, [v4SwapExactInSingle(key, zeroForOne, amountIn, amountOut)], deadline],
      ...mined,
    });
    expect(usdcBefore - (await balance(usdc.address))).toBe(amountIn);
    expect((await balance(usdt.address)) - usdtBefore).toBe(amountOut);
    // The allowance is used up.
    const [left] = await client.readContract({ address: config.permit2, abi: permit2Abi, functionName: 'allowance', args: [me, usdc.address, config.universalRouter] });
    expect(left).toBe(0n);
  });

  test('native ETH in: 0.5 ETH through the router buys what V4Quoter quotes', async () => {
    const user = await newPayer(devnet, 'ethereum'); // 1 ETH for gas and the swap
    const me = user.address;
    const amountIn = parseUnits('0.5', 18);
    const key = config.pools.find((k) => k.currency0 === zeroAddress)!;
    const { result } = await client.simulateContract({
      account: me,
      address: config.v4Quoter,
      abi: v4QuoterAbi,
      functionName: 'quoteExactInputSingle',
      args: [{ poolKey: key, zeroForOne: true, exactAmount: amountIn, hookData: '0x' }],
    });
    const [amountOut] = result;
    // Near 1,495.5 USDC (0.5 ETH at 3000 less the 0.3 % fee), as far as other files' trades have moved the price.
    expect(Math.abs(Number(amountOut) / 1e6 / (1500 * 0.997) - 1)).toBeLessThan(0.1);
    const usdcBefore = await client.readContract({ address: usdc.address, abi: testStablecoinAbi, functionName: 'balanceOf', args: [me] });
    const ethBefore = await client.getBalance({ address: me });
    const receipt = await user.wallet.writeContractSync({
      address: config.universalRouter,
      abi: universalRouterAbi,
      functionName: 'execute',
      args: [V4_SWAP, [v4SwapExactInSingle(key, true, amountIn, amountOut)], BigInt(Math.floor(Date.now() / 1000) + 600)],
      value: amountIn,
      throwOnReceiptRevert: true,
    });
    expect((await client.readContract({ address: usdc.address, abi: testStablecoinAbi, functionName: 'balanceOf', args: [me] })) - usdcBefore).toBe(amountOut);
    expect(ethBefore - (await client.getBalance({ address: me }))).toBe(amountIn + receipt.gasUsed * receipt.effectiveGasPrice);
  });

  test('deploying again on the same chain sends nothing and returns the same config', async () => {
    const lines: string[] = [];
    const height = await client.getBlockNumber();
    const result = await uniswapV4.deploy(deployCtx(devnetChain(ethereum), (l) => lines.push(l)));
    expect(result.deployed).toEqual([]);
    expect(result.config).toEqual(ethereum.protocols?.uniswapV4);
    expect(await client.getBlockNumber()).toBe(height);
    expect(lines).toEqual([]);
  });
});

test('a fresh chain gets the same addresses, each pool at its start price, and a second deployment sends nothing', async () => {
  const node = await startAnvil({ chainId: CHAIN_IDS.ethereum, marker: `uniswap-v4-test-${randomBytes(4).toString('hex')}`, accounts: ANVIL_ACCOUNT_COUNT });
  onTestFinished(() => node.stop());
  const chain = devnetChain({ chainId: node.chainId, name: 'ethereum', rpcUrl: node.rpcUrl });
  await deployChain({ chain, accounts: devnetAccounts(), log: () => {} });
  // Without v3 on the chain: the router's v3 addresses are computed, so v4 does not depend on v3's deployment.
  // A deployment cut short after the PoolManager: the next one does the rest, and only the rest.
  const { poolManager } = uniswapV4Contracts({ owner: protocolDeployer.address, weth: weth.address, v3Factory: zeroAddress, v3PositionManager: zeroAddress });
  await devnetWalletClient(chain, protocolDeployer.privateKey).sendTransactionSync({ to: CREATE2_DEPLOYER, data: concat([poolManager.salt, poolManager.initCode]) });

  const full = await uniswapV4.deploy(deployCtx(chain));
  expect(full.config).toEqual(config);
  expect(full.deployed.slice(0, 5)).toEqual(['StateView', 'V4Quoter', 'PoolModifyLiquidityTest', 'Permit2', 'UniversalRouter']);
  expect(full.deployed).toHaveLength(13);
  const fresh = devnetPublicClient(chain);
  for (const p of v4Pools(ethereum.tokens)) {
    const [sqrtPriceX96] = await fresh.readContract({ address: config.stateView, abi: stateViewAbi, functionName: 'getSlot0', args: [p.id] });
    expect(sqrtPriceX96, p.label).toBe(p.sqrtPriceX96);
    expect(await fresh.readContract({ address: config.stateView, abi: stateViewAbi, functionName: 'getLiquidity', args: [p.id] }), p.label).toBe(p.liquidity);
  }
  const height = await fresh.getBlockNumber();
  expect((await uniswapV4.deploy(deployCtx(chain))).deployed).toEqual([]);
  expect(await fresh.getBlockNumber()).toBe(height);
});
