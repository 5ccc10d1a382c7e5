import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import {
  BaseError,
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  encodeFunctionData,
  getAddress,
  maxUint256,
  parseUnits,
  type Address,
  type PublicClient,
} from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { testDevnet } from '../../../../test/support/env.ts';
import { AaveV3ConfigSchema } from '../../../protocols/aaveV3/config.ts';
import { devnetAccounts, ANVIL_ACCOUNT_COUNT } from '../../accounts.ts';
import { startAnvil, type AnvilInstance } from '../../anvil.ts';
import { devnetChain, devnetPublicClient, devnetWalletClient } from '../../clients.ts';
import { devnetPriceFeedAbi, testStablecoinAbi } from '../../contracts.ts';
import { deployChain } from '../../deploy.ts';
import { DEVNET_PROTOCOLS } from '../index.ts';
import type { ProtocolDeployContext } from '../types.ts';
import { aaveOracleAbi, aaveProtocolDataProviderAbi, poolAbi, poolAddressesProviderAbi, uiPoolDataProviderV3Abi } from './abis.ts';
import { batchingClient, deployAaveV3, deploymentSteps } from './deploy.ts';
import { aaveV3 } from './index.ts';
import { RESERVES } from './parameters.ts';
import { decodeReserveConfiguration } from './reserveConfiguration.ts';
import { sendInOrder } from '../sender.ts';

const devnet = testDevnet();
const eth = devnet.chain('ethereum');
const client = devnet.publicClient('ethereum') as PublicClient;
const config = AaveV3ConfigSchema.parse(eth.protocols?.aaveV3);
const token = (symbol: string): Address => {
  const t = eth.tokens.find((x) => x.symbol === symbol);
  if (!t) throw new Error(`no ${symbol} on the devnet`);
  return t.address;
};
const USDC = token('USDC');
const WETH = token('WETH');
const usdc = (n: string) => parseUnits(n, 6);
const weth = (n: string) => parseUnits(n, 18);
/** The oracle's base currency: USD with 8 decimals. */
const usd = (n: string) => parseUnits(n, 8);

const protocolDeployer = devnet.manifest.accounts.protocolDeployer;
if (!protocolDeployer) throw new Error('the devnet manifest names no protocol deployer');

/** A fresh EOA: gas from anvil_setBalance, tokens from their public mint. */
const user = devnetWalletClient(devnetChain(eth), generatePrivateKey());
const gas: Record<string, bigint> = {};
/**
 * One transaction of the user's, mined or thrown: viem's writeContractSync returns a reverted receipt as it does a
 * successful one, and a CI run once read an untouched aToken balance after a "successful" withdraw. Gas is the
 * estimate plus 30 %, as wallets send: the estimate (on the last block) leaves withdraw about 5 % over what it uses,
 * and Aave's index updates cost more in a block with a later timestamp.
 */
const send: typeof user.writeContractSync = async (request) => {
  const estimate = await client.estimateContractGas({ ...(request as Parameters<typeof client.estimateContractGas>[0]), account: user.account });
  return user.writeContractSync({ ...request, gas: (estimate * 13n) / 10n, throwOnReceiptRevert: true } as typeof request);
};
const accountData = async () => {
  const [totalCollateralBase, totalDebtBase, availableBorrowsBase, currentLiquidationThreshold, ltv, healthFactor] = await client.readContract({
    address: config.pool,
    abi: poolAbi,
    functionName: 'getUserAccountData',
    args: [user.account.address],
  });
  return { totalCollateralBase, totalDebtBase, availableBorrowsBase, currentLiquidationThreshold, ltv, healthFactor };
};
const balanceOf = (asset: Address, who: Address) => client.readContract({ address: asset, abi: testStablecoinAbi, functionName: 'balanceOf', args: [who] });
const wethFeed = () => client.readContract({ address: config.oracle, abi: aaveOracleAbi, functionName: 'getSourceOfAsset', args: [WETH] });
const setWethPrice = async (answer: bigint) => {
  const owner = devnetWalletClient(devnetChain(eth), protocolDeployer.privateKey);
  await owner.writeContractSync({ address: await wethFeed(), abi: devnetPriceFeedAbi, functionName: 'setAnswer', args: [answer] });
};

describe('Aave v3 on the devnet (ethereum)', () => {
  beforeAll(async () => {
    await client.request({ method: 'anvil_setBalance', params: [user.account.address, '0xde0b6b3a7640000'] } as never);
  });
  afterAll(() => {
    console.log(`aaveV3 gas (fresh EOA, first action of each kind): ${Object.entries(gas).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  });

  test('is in DEVNET_PROTOCOLS for ethereum only, and the manifest has its config', async () => {
    expect(DEVNET_PROTOCOLS).toContain(aaveV3);
    expect(aaveV3.chains).toEqual(['ethereum']);
    for (const name of ['base', 'arbitrum'] as const) expect(devnet.chain(name).protocols?.aaveV3).toBeUndefined();
    const read = (functionName: 'getPool' | 'getPriceOracle' | 'getPoolDataProvider') =>
      client.readContract({ address: config.poolAddressesProvider, abi: poolAddressesProviderAbi, functionName });
    expect(await read('getPool')).toBe(config.pool);
    expect(await read('getPriceOracle')).toBe(config.oracle);
    expect(await read('getPoolDataProvider')).toBe(config.protocolDataProvider);
    expect((await client.getCode({ address: config.uiPoolDataProvider }))?.length ?? 0).toBeGreaterThan(2);
  });

  test('lists USDC and WETH with their risk parameters, priced by the devnet feeds', async () => {
    expect(await client.readContract({ address: config.pool, abi: poolAbi, functionName: 'getReservesList' })).toEqual([USDC, WETH]);
    for (const r of RESERVES) {
      const { data } = await client.readContract({ address: config.pool, abi: poolAbi, functionName: 'getConfiguration', args: [token(r.symbol)] });
      expect(decodeReserveConfiguration(data)).toMatchObject({
        ltv: r.ltv,
        liquidationThreshold: r.liquidationThreshold,
        liquidationBonus: r.liquidationBonus,
        decimals: r.decimals,
        active: true,
        frozen: false,
        paused: false,
        borrowingEnabled: true,
        stableBorrowingEnabled: false,
        flashLoanEnabled: true,
        reserveFactor: r.reserveFactor,
      });
    }
    expect(await client.readContract({ address: config.oracle, abi: aaveOracleAbi, functionName: 'getAssetPrice', args: [USDC] })).toBe(usd('1'));
    expect(await client.readContract({ address: config.oracle, abi: aaveOracleAbi, functionName: 'getAssetPrice', args: [WETH] })).toBe(usd('3000'));
  });

  test('supply WETH, borrow USDC: getUserAccountData follows', async () => {
    await send({ address: WETH, abi: testStablecoinAbi, functionName: 'mint', args: [user.account.address, weth('10')] });
    await send({ address: WETH, abi: testStablecoinAbi, functionName: 'approve', args: [config.pool, maxUint256] });
    gas.supply = (await send({ address: config.pool, abi: poolAbi, functionName: 'supply', args: [WETH, weth('10'), user.account.address, 0] })).gasUsed;
    // 10 WETH at 3000 USD, 80 % LTV; no debt: the health factor is uint256 max.
    expect(await accountData()).toEqual({
      totalCollateralBase: usd('30000'),
      totalDebtBase: 0n,
      availableBorrowsBase: usd('24000'),
      currentLiquidationThreshold: 8250n,
      ltv: 8000n,
      healthFactor: maxUint256,
    });

    const before = await balanceOf(USDC, user.account.address);
    gas.borrow = (await send({ address: config.pool, abi: poolAbi, functionName: 'borrow', args: [USDC, usdc('10000'), 2n, 0, user.account.address] })).gasUsed;
    expect((await balanceOf(USDC, user.account.address)) - before).toBe(usdc('10000'));
    const after = await accountData();
    expect(after.totalCollateralBase).toBe(usd('30000'));
    // Interest accrues by the second; a read in the borrow's own block sees none of it.
    expect(after.totalDebtBase).toBeGreaterThanOrEqual(usd('10000'));
    expect(after.totalDebtBase).toBeLessThan(usd('10000.01'));
    expect(after.availableBorrowsBase).toBeLessThanOrEqual(usd('14000'));
    expect(after.availableBorrowsBase).toBeGreaterThan(usd('13999.99'));
    // 30000 × 82.5 % / 10000 = 2.475
    expect(after.healthFactor).toBeLessThanOrEqual(2_475_000_000_000_000_000n);
    expect(after.healthFactor).toBeGreaterThan(2_474_000_000_000_000_000n);
    expect(gas.supply).toBeGreaterThan(100_000n);
    expect(gas.borrow).toBeGreaterThan(150_000n);
  });

  test('UiPoolDataProviderV3 answers for both reserves and for the user', async () => {
    const [reserves, base] = await client.readContract({
      address: config.uiPoolDataProvider,
      abi: uiPoolDataProviderV3Abi,
      functionName: 'getReservesData',
      args: [config.poolAddressesProvider],
    });
    expect(reserves.map((r) => [r.underlyingAsset, r.symbol, r.decimals])).toEqual([
      [USDC, 'USDC', 6n],
      [WETH, 'WETH', 18n],
    ]);
    for (const [i, p] of RESERVES.entries()) {
      const r = reserves[i]!;
      expect(r).toMatchObject({
        baseLTVasCollateral: BigInt(p.ltv),
        reserveLiquidationThreshold: BigInt(p.liquidationThreshold),
        reserveLiquidationBonus: BigInt(p.liquidationBonus),
        reserveFactor: BigInt(p.reserveFactor),
        usageAsCollateralEnabled: true,
        borrowingEnabled: true,
        stableBorrowRateEnabled: false,
        isActive: true,
        isFrozen: false,
        isPaused: false,
        priceInMarketReferenceCurrency: p.priceUsd,
        optimalUsageRatio: p.strategy.optimalUsageRatio,
        variableRateSlope1: p.strategy.variableRateSlope1,
      });
      expect(r.availableLiquidity).toBeGreaterThan(0n);
    }
    // The USDC borrowed above: debt and a variable rate above 0.
    expect(reserves[0]!.totalScaledVariableDebt).toBeGreaterThan(0n);
    expect(reserves[0]!.variableBorrowRate).toBeGreaterThan(0n);
    expect(reserves[1]!.priceOracle).toBe(await wethFeed());
    expect(base).toEqual({
      marketReferenceCurrencyUnit: usd('1'),
      marketReferenceCurrencyPriceInUsd: usd('1'),
      networkBaseTokenPriceInUsd: usd('3000'),
      networkBaseTokenPriceDecimals: 8,
    });

    const [mine, eMode] = await client.readContract({
      address: config.uiPoolDataProvider,
      abi: uiPoolDataProviderV3Abi,
      functionName: 'getUserReservesData',
      args: [config.poolAddressesProvider, user.account.address],
    });
    expect(eMode).toBe(0);
    expect(mine.map((r) => r.underlyingAsset)).toEqual([USDC, WETH]);
    expect(mine[0]).toMatchObject({ scaledATokenBalance: 0n, usageAsCollateralEnabledOnUser: false, principalStableDebt: 0n });
    expect(mine[0]!.scaledVariableDebt).toBeGreaterThan(0n);
    expect(mine[1]).toMatchObject({ usageAsCollateralEnabledOnUser: true, scaledVariableDebt: 0n });
    expect(mine[1]!.scaledATokenBalance).toBeGreaterThan(0n);
  });

  test('a WETH price change through its feed moves the health factor', async () => {
    onTestFinished(() => setWethPrice(usd('3000')));
    const at3000 = (await accountData()).healthFactor;
    await setWethPrice(usd('2000'));
    const at2000 = await accountData();
    expect(at2000.totalCollateralBase).toBe(usd('20000'));
    // 20000 × 82.5 % / 10000 ≈ 1.65
    expect(at2000.healthFactor).toBeLessThanOrEqual(1_650_000_000_000_000_000n);
    expect(at2000.healthFactor).toBeGreaterThan(1_649_000_000_000_000_000n);
    await setWethPrice(usd('1200'));
    expect((await accountData()).healthFactor).toBeLessThan(10n ** 18n); // liquidatable
    await setWethPrice(usd('3000'));
    expect((await accountData()).healthFactor).toBeLessThanOrEqual(at3000);
  });

  test("a borrow beyond capacity reverts with Aave's error string '36' (COLLATERAL_CANNOT_COVER_NEW_BORROW)", async () => {
    // ≈ 14,000 USD can still be borrowed.
    const request = { address: config.pool, abi: poolAbi, functionName: 'borrow', args: [USDC, usdc('20000'), 2n, 0, user.account.address] } as const;
    for (const attempt of [() => client.simulateContract({ ...request, account: user.account }), () => user.writeContractSync(request)]) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      // viem: ContractFunctionExecutionError ← ContractFunctionRevertedError { reason: '36', data: Error(string) '36' }.
      // writeContract fails in its gas estimate: nothing is sent.
      expect(error).toBeInstanceOf(ContractFunctionExecutionError);
      const reverted = (error as BaseError).walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
      expect(reverted?.reason).toBe('36');
      expect(reverted?.data?.errorName).toBe('Error');
      expect(reverted?.data?.args).toEqual(['36']);
      expect((error as BaseError).shortMessage).toBe('The contract function "borrow" reverted with the following reason:\n36');
    }
  });

  test('repay with type(uint256).max clears the debt; withdraw with max returns all the WETH', async () => {
    // Interest accrued since the borrow: a little more USDC than was borrowed.
    await send({ address: USDC, abi: testStablecoinAbi, functionName: 'mint', args: [user.account.address, usdc('10')] });
    await send({ address: USDC, abi: testStablecoinAbi, functionName: 'approve', args: [config.pool, maxUint256] });
    gas.repay = (await send({ address: config.pool, abi: poolAbi, functionName: 'repay', args: [USDC, maxUint256, 2n, user.account.address] })).gasUsed;
    const reserve = (asset: Address) =>
      client.readContract({ address: config.protocolDataProvider, abi: aaveProtocolDataProviderAbi, functionName: 'getUserReserveData', args: [asset, user.account.address] });
    expect((await reserve(USDC))[2]).toBe(0n); // currentVariableDebt
    expect((await accountData()).totalDebtBase).toBe(0n);

    gas.withdraw = (await send({ address: config.pool, abi: poolAbi, functionName: 'withdraw', args: [WETH, maxUint256, user.account.address] })).gasUsed;
    expect((await reserve(WETH))[0]).toBe(0n); // currentATokenBalance
    expect(await balanceOf(WETH, user.account.address)).toBeGreaterThanOrEqual(weth('10'));
    expect(await accountData()).toMatchObject({ totalCollateralBase: 0n, totalDebtBase: 0n, healthFactor: maxUint256 });
  });

  test('deploying again on the same chain deploys nothing and returns the same config', async () => {
    const logs: string[] = [];
    const result = await aaveV3.deploy({
      chain: devnetChain(eth),
      name: 'ethereum',
      deployer: protocolDeployer,
      funded: devnet.manifest.accounts.funded,
      tokens: eth.tokens,
      log: (line) => logs.push(line),
    });
    expect(result).toEqual({ deployed: [], config });
    expect(logs).toEqual([]);
  });
});

/**
 * A chain of its own (anvil with the devnet's base contracts), to deploy on from scratch: the same addresses as
 * the run's devnet, whatever the deployer's nonce; a deployment cut anywhere is finished; a foreign one is refused.
 */
describe('Aave v3 deployment on a fresh chain', () => {
  let node: AnvilInstance;
  let ctx: ProtocolDeployContext;
  let fresh: PublicClient;
  let snapshot: string;
  const accounts = devnetAccounts();
  const rpc = <T>(method: string, params: unknown[] = []) => fresh.request({ method, params } as never) as Promise<T>;
  /** Back to the chain with only the devnet's base contracts (anvil drops a snapshot once reverted to). */
  const reset = async () => {
    expect(await rpc('evm_revert', [snapshot])).toBe(true);
    snapshot = await rpc<string>('evm_snapshot');
  };

  beforeAll(async () => {
    node = await startAnvil({ chainId: eth.chainId, marker: `aaveV3-test-${process.pid}`, accounts: ANVIL_ACCOUNT_COUNT });
    const chain = devnetChain({ chainId: eth.chainId, name: 'ethereum', rpcUrl: node.rpcUrl });
    await deployChain({ chain, accounts, log: () => {} });
    fresh = devnetPublicClient(chain) as PublicClient;
    ctx = { chain, name: 'ethereum', deployer: accounts.protocolDeployer, funded: accounts.funded, tokens: eth.tokens, log: () => {} };
    snapshot = await rpc<string>('evm_snapshot');
  });
  afterAll(async () => {
    await node?.stop();
  });

  test('lands on the devnet addresses whatever the deployer nonce; a reload sends nothing', async () => {
    await rpc('anvil_setNonce', [accounts.protocolDeployer.address, '0x2a']);
    let t = performance.now();
    const first = await deployAaveV3(ctx);
    const freshMs = performance.now() - t;
    expect(first.config).toEqual(config);
    expect(first.deployed.length).toBe(deploymentSteps(ctx).length);
    t = performance.now();
    const again = await deployAaveV3(ctx);
    const reloadMs = performance.now() - t;
    expect(again).toEqual({ deployed: [], config });
    console.log(`aaveV3 deployment: fresh ${Math.round(freshMs)} ms (${first.deployed.length} steps), reload ${Math.round(reloadMs)} ms`);
  });

  test('a deployment cut off anywhere (a crash) is finished, at the same addresses', async () => {
    await reset();
    const steps = deploymentSteps(ctx, batchingClient(ctx));
    const plans = await Promise.all(steps.map((s) => s.plan()));
    const txs = plans.flat();
    // Where each step's transactions end in the whole sequence.
    const ends = plans.map((_, i) => plans.slice(0, i + 1).reduce((n, p) => n + p.length, 0));
    const pool = txs.findIndex((tx) => tx.what.startsWith('setPoolImpl'));
    const supply = txs.findIndex((tx) => tx.what === 'supply(WETH)');
    // Early; right after the Pool proxy (the provider's next `new` must still be the configurator); mid
    // configuration; inside a seed supply (minted and approved, not supplied).
    for (const cut of [4, pool + 1, supply - 6, supply]) {
      await reset();
      await sendInOrder(fresh, ctx.chain, ctx.deployer, txs.slice(0, cut), 'aaveV3');
      const result = await deployAaveV3(ctx);
      expect(result.config, `cut after ${cut} transactions`).toEqual(config);
      expect(result.deployed, `cut after ${cut} transactions`).toEqual(steps.filter((_, i) => ends[i]! > cut).map((s) => s.label));
      expect((await deployAaveV3(ctx)).deployed).toEqual([]);
    }
  });

  test('a transaction of the deployment that reverts is reported with its step and reason', async () => {
    const zeroSupply = encodeFunctionData({ abi: poolAbi, functionName: 'supply', args: [USDC, 0n, ctx.deployer.address, 0] });
    await expect(sendInOrder(fresh, ctx.chain, ctx.deployer, [{ what: 'supply(USDC, 0)', to: config.pool, data: zeroSupply }], 'aaveV3')).rejects.toThrow(
      /^devnet ethereum: aaveV3: supply\(USDC, 0\): transaction 0x[0-9a-f]{64} reverted: Error\("26"\)$/, // INVALID_AMOUNT
    );
  });

  test('another deployment at these addresses is refused with what differs', async () => {
    const owner = devnetWalletClient(ctx.chain, accounts.protocolDeployer.privateKey);
    const elsewhere = getAddress('0x000000000000000000000000000000000000dEaD');
    await owner.sendTransactionSync({
      to: config.poolAddressesProvider,
      data: encodeFunctionData({ abi: poolAddressesProviderAbi, functionName: 'setPriceOracle', args: [elsewhere] }),
    });
    await expect(deployAaveV3(ctx)).rejects.toThrow(`PoolAddressesProvider.getPriceOracle() is ${elsewhere}, expected ${config.oracle}`);
  });
});
