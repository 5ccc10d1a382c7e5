/**
 * The devnet's Compound v3 market (contracts/DevnetComet.sol) on the run's devnet, driven only through the real
 * Comet's ABI (abi.ts): collateral, borrow, interest, the custom errors, health, repay, withdraw. Everything this
 * file does on `base` (time travel included) is undone by an evm_revert at the end, so later files find the
 * market and the chain's clock as they were.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  BaseError,
  ContractFunctionRevertedError,
  concat,
  decodeEventLog,
  isAddressEqual,
  maxUint256,
  parseAbi,
  parseUnits,
  toEventSelector,
  toFunctionSelector,
  type Abi,
  type AbiFunction,
  type AbiParameter,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { testDevnet } from '../../../../test/support/env.ts';
import { newPayer } from '../../../../test/support/payer.ts';
import { ANVIL_ACCOUNT_COUNT, devnetAccounts } from '../../accounts.ts';
import { startAnvil } from '../../anvil.ts';
import cometArtifact from '../../artifacts/DevnetComet.json' with { type: 'json' };
import { devnetChain, devnetPublicClient, devnetWalletClient } from '../../clients.ts';
import { CREATE2_DEPLOYER, devnetPriceFeedAbi, testStablecoinAbi } from '../../contracts.ts';
import { deployChain } from '../../deploy.ts';
import { cometAbi } from '../../../protocols/compoundV3/abi.ts';
import { cometDeployments } from './deployments.ts';
import { compoundV3 } from './index.ts';
import { USDC_MARKET } from './market.ts';

const devnet = testDevnet();
const CHAIN = 'base';
const base = devnet.chain(CHAIN);
const client = devnet.publicClient(CHAIN);
const protocolDeployer = devnet.manifest.accounts.protocolDeployer!;
const token = (symbol: string): Address => base.tokens.find((t) => t.symbol === symbol)!.address;
const USDC = token('USDC');
const WETH = token('WETH');
const usdc = (amount: string): bigint => parseUnits(amount, 6);
const weth = (amount: string): bigint => parseUnits(amount, 18);
const comet = base.protocols?.compoundV3?.markets[0]?.comet as Address;
const read = { address: comet, abi: cometAbi } as const;
const SECONDS_PER_YEAR = 31_536_000n;
const FACTOR_SCALE = 10n ** 18n;
const BASE_INDEX_SCALE = 10n ** 15n;

/**
 * Gas limit of the Comet writes. anvil's estimate is the exact minimum at the moment of the estimate: if the
 * clock ticks a second before the transaction is mined, the Comet also accrues interest (as the real one does),
 * which costs a few thousand gas more, and the transaction would run out of gas.
 */
const GAS = 1_000_000n;

const rpc = <T>(method: string, params: unknown[] = []): Promise<T> => client.request({ method, params } as never) as Promise<T>;

/** Gas of each Comet operation, printed at the end. */
const gas: [string, bigint][] = [];
const recorded = (label: string, receipt: TransactionReceipt): TransactionReceipt => {
  expect(receipt.status, label).toBe('success');
  gas.push([label, receipt.gasUsed]);
  return receipt;
};

/** The custom error a call reverts with, decoded by viem with the real Comet ABI. */
async function revertOf(call: Promise<unknown>): Promise<string | undefined> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof BaseError)) throw new Error(`expected a revert, got ${String(error)}`);
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
  if (!(reverted instanceof ContractFunctionRevertedError)) return undefined;
  // A custom error by name; a require's Error(string) by its reason.
  return reverted.data && reverted.data.errorName !== 'Error' ? reverted.data.errorName : reverted.reason;
}

/** The Comet's events in a receipt, decoded with the real Comet ABI. */
const cometEvents = (receipt: TransactionReceipt) =>
  receipt.logs.filter((l) => isAddressEqual(l.address, comet)).map((l) => decodeEventLog({ abi: cometAbi, data: l.data, topics: l.topics }));

describe('compoundV3 on the devnet (DevnetComet through the real Comet ABI)', () => {
  let snapshot: Hex;
  let marketBefore: unknown;
  let borrower: Awaited<ReturnType<typeof newPayer>>;
  let supplier: Awaited<ReturnType<typeof newPayer>>;
  const assetInfo = () => client.readContract({ ...read, functionName: 'getAssetInfoByAddress', args: [WETH] });
  const write = (who: typeof borrower, functionName: 'supply' | 'withdraw', asset: Address, amount: bigint) =>
    who.wallet.writeContractSync({ ...read, functionName, args: [asset, amount], gas: GAS });
  const simulate = (who: typeof borrower, functionName: 'supply' | 'withdraw', asset: Address, amount: bigint) =>
    client.simulateContract({ ...read, functionName, args: [asset, amount], account: who.address });
  const balance = (asset: Address, owner: Address) => client.readContract({ address: asset, abi: testStablecoinAbi, functionName: 'balanceOf', args: [owner] });

  beforeAll(async () => {
    expect(comet, 'the manifest has a compoundV3 market on base').toMatch(/^0x[0-9a-fA-F]{40}$/);
    snapshot = await rpc<Hex>('evm_snapshot');
    marketBefore = await client.readContract({ ...read, functionName: 'totalsBasic' });
    borrower = await newPayer(devnet, CHAIN);
    supplier = await newPayer(devnet, CHAIN);
    await borrower.mint('WETH', borrower.address, weth('10'));
    await borrower.mint('USDC', borrower.address, usdc('1000')); // the interest, when repaying
    await supplier.mint('USDC', supplier.address, usdc('5000'));
    for (const [who, asset] of [[borrower, WETH], [borrower, USDC], [supplier, USDC]] as const) {
      await who.wallet.writeContractSync({ address: asset, abi: testStablecoinAbi, functionName: 'approve', args: [comet, maxUint256] });
    }
  });

  afterAll(async () => {
    if (snapshot) {
      expect(await rpc<boolean>('evm_revert', [snapshot])).toBe(true);
      // The market as this file found it, and the clock back from its 30 days ahead.
      expect(await client.readContract({ ...read, functionName: 'totalsBasic' })).toEqual(marketBefore);
      await rpc('evm_mine');
      expect(Number((await client.getBlock()).timestamp)).toBeLessThan(Date.now() / 1000 + 60);
    }
    if (gas.length > 0) console.log(`DevnetComet gas:\n${gas.map(([label, used]) => `  ${label.padEnd(44)} ${used}`).join('\n')}`);
  });

  test('the manifest names the market; the Comet is configured as planned, like Base Sepolia cUSDCv3', async () => {
    const plan = cometDeployments({ tokens: base.tokens, owner: protocolDeployer.address });
    expect(base.protocols?.compoundV3).toEqual({ markets: [{ name: 'cUSDCv3', comet: plan.comet.address }] });
    const r = <F extends 'name' | 'symbol' | 'decimals' | 'baseToken' | 'baseTokenPriceFeed' | 'baseScale' | 'baseBorrowMin' | 'numAssets'>(functionName: F) =>
      client.readContract({ ...read, functionName });
    expect(await Promise.all([r('name'), r('symbol'), r('decimals'), r('baseToken'), r('baseTokenPriceFeed'), r('baseScale'), r('baseBorrowMin'), r('numAssets')])).toEqual([
      'Compound USDC',
      'cUSDCv3',
      6,
      USDC,
      plan.baseFeed.address,
      10n ** 6n,
      usdc('1'),
      1,
    ]);
    const info = await client.readContract({ ...read, functionName: 'getAssetInfo', args: [0] });
    expect(info).toEqual({
      offset: 0,
      asset: WETH,
      priceFeed: plan.collateralFeeds[0]!.address,
      scale: 10n ** 18n,
      borrowCollateralFactor: weth('0.775'),
      liquidateCollateralFactor: weth('0.825'),
      liquidationFactor: weth('0.95'),
      supplyCap: weth('100000'),
    });
    expect(await assetInfo()).toEqual(info);
    expect(await revertOf(client.readContract({ ...read, functionName: 'getAssetInfo', args: [1] }))).toBe('BadAsset');
    expect(await client.readContract({ ...read, functionName: 'getPrice', args: [plan.baseFeed.address] })).toBe(10n ** 8n);
    expect(await client.readContract({ ...read, functionName: 'getPrice', args: [info.priceFeed] })).toBe(3000n * 10n ** 8n);

    // The kink model: per-second rates are the yearly ones over 365 days, the kink at 85 % utilization.
    const rates = USDC_MARKET.rates;
    const perSecond = (yearly: bigint) => yearly / SECONDS_PER_YEAR;
    const [low, high, baseRate, kink] = await Promise.all(
      (['borrowPerSecondInterestRateSlopeLow', 'borrowPerSecondInterestRateSlopeHigh', 'borrowPerSecondInterestRateBase', 'borrowKink'] as const).map((functionName) =>
        client.readContract({ ...read, functionName }),
      ),
    );
    expect([low, high, baseRate, kink]).toEqual([
      perSecond(rates.borrowPerYearInterestRateSlopeLow),
      perSecond(rates.borrowPerYearInterestRateSlopeHigh),
      perSecond(rates.borrowPerYearInterestRateBase),
      rates.borrowKink,
    ]);
    const borrowRate = (u: bigint) => client.readContract({ ...read, functionName: 'getBorrowRate', args: [u] });
    expect(await borrowRate(0n)).toBe(baseRate);
    expect(await borrowRate(kink!)).toBe(baseRate! + (low! * kink!) / FACTOR_SCALE);
    expect(await borrowRate(FACTOR_SCALE)).toBe(baseRate! + (low! * kink!) / FACTOR_SCALE + (high! * (FACTOR_SCALE - kink!)) / FACTOR_SCALE);
    expect(await client.readContract({ ...read, functionName: 'getSupplyRate', args: [0n] })).toBe(0n);

    // The deployer's seed: borrowing works at once.
    expect(await client.readContract({ ...read, functionName: 'balanceOf', args: [protocolDeployer.address] })).toBeGreaterThanOrEqual(USDC_MARKET.seedSupply);
    expect(await client.readContract({ ...read, functionName: 'totalSupply' })).toBeGreaterThanOrEqual(USDC_MARKET.seedSupply);
    expect(await client.readContract({ ...read, functionName: 'isSupplyPaused' })).toBe(false);
  });

  test('supply(WETH) adds collateral', async () => {
    const before = await client.readContract({ ...read, functionName: 'totalsCollateral', args: [WETH] });
    const receipt = recorded('supply(WETH, 10) collateral', await write(borrower, 'supply', WETH, weth('10')));
    expect(cometEvents(receipt)).toEqual([
      { eventName: 'SupplyCollateral', args: { from: borrower.address, dst: borrower.address, asset: WETH, amount: weth('10') } },
    ]);
    expect(await client.readContract({ ...read, functionName: 'collateralBalanceOf', args: [borrower.address, WETH] })).toBe(weth('10'));
    const after = await client.readContract({ ...read, functionName: 'totalsCollateral', args: [WETH] });
    expect(after[0] - before[0]).toBe(weth('10'));
    const [principal, , , assetsIn] = await client.readContract({ ...read, functionName: 'userBasic', args: [borrower.address] });
    expect([principal, assetsIn]).toEqual([0n, 1]);
    expect(await balance(WETH, borrower.address)).toBe(0n);
    expect(await revertOf(simulate(borrower, 'supply', token('USDT'), 1n))).toBe('BadAsset');
  });

  test('a borrow beyond the capacity reverts NotCollateralized(), one under baseBorrowMin BorrowTooSmall()', async () => {
    // 10 WETH × 3000 USD × 0.775 = 23,250 USDC of capacity.
    expect(await revertOf(simulate(borrower, 'withdraw', USDC, usdc('23251')))).toBe('NotCollateralized');
    expect(await revertOf(simulate(borrower, 'withdraw', USDC, usdc('0.999999')))).toBe('BorrowTooSmall');
    expect(await revertOf(simulate(supplier, 'withdraw', USDC, usdc('100')))).toBe('NotCollateralized'); // no collateral at all
  });

  test('withdraw(USDC) past the supplied balance borrows: the debt is collateralized, not liquidatable', async () => {
    const usdcBefore = await balance(USDC, borrower.address);
    const receipt = recorded('withdraw(USDC, 15000) borrow', await write(borrower, 'withdraw', USDC, usdc('15000')));
    expect(cometEvents(receipt)).toEqual([{ eventName: 'Withdraw', args: { src: borrower.address, to: borrower.address, amount: usdc('15000') } }]);
    expect((await balance(USDC, borrower.address)) - usdcBefore).toBe(usdc('15000'));
    const at = { blockNumber: receipt.blockNumber };
    // Debt is kept as principal rounded up, so its present value may be one unit above what was borrowed.
    const debt = await client.readContract({ ...read, functionName: 'borrowBalanceOf', args: [borrower.address], ...at });
    expect(debt - usdc('15000')).toBeGreaterThanOrEqual(0n);
    expect(debt - usdc('15000')).toBeLessThanOrEqual(1n);
    expect(await client.readContract({ ...read, functionName: 'balanceOf', args: [borrower.address], ...at })).toBe(0n);
    expect((await client.readContract({ ...read, functionName: 'userBasic', args: [borrower.address], ...at }))[0]).toBeLessThan(0n);
    expect(await client.readContract({ ...read, functionName: 'isBorrowCollateralized', args: [borrower.address], ...at })).toBe(true);
    expect(await client.readContract({ ...read, functionName: 'isLiquidatable', args: [borrower.address], ...at })).toBe(false);
    // 5 WETH left would carry 11,625 USDC: not the 15,000 borrowed.
    expect(await revertOf(simulate(borrower, 'withdraw', WETH, weth('5')))).toBe('NotCollateralized');
  });

  test('supply(USDC) without debt supplies: balanceOf is the present value', async () => {
    const receipt = recorded('supply(USDC, 5000) base', await write(supplier, 'supply', USDC, usdc('5000')));
    const events = cometEvents(receipt);
    expect(events[0]).toEqual({ eventName: 'Supply', args: { from: supplier.address, dst: supplier.address, amount: usdc('5000') } });
    expect(events[1]).toMatchObject({ eventName: 'Transfer', args: { from: '0x0000000000000000000000000000000000000000', to: supplier.address } });
    // Supply is kept as principal rounded down: its present value may be one unit under what was supplied.
    const supplied = await client.readContract({ ...read, functionName: 'balanceOf', args: [supplier.address], blockNumber: receipt.blockNumber });
    expect(usdc('5000') - supplied).toBeGreaterThanOrEqual(0n);
    expect(usdc('5000') - supplied).toBeLessThanOrEqual(1n);
  });

  test('interest accrues over time at the rates the contract reports, on the borrow and on the supply', async () => {
    const at = { blockNumber: await client.getBlockNumber() };
    const [totals, utilization, b, s] = await Promise.all([
      client.readContract({ ...read, functionName: 'totalsBasic', ...at }),
      client.readContract({ ...read, functionName: 'getUtilization', ...at }),
      client.readContract({ ...read, functionName: 'userBasic', args: [borrower.address], ...at }),
      client.readContract({ ...read, functionName: 'userBasic', args: [supplier.address], ...at }),
    ]);
    const [borrowRate, supplyRate] = await Promise.all([
      client.readContract({ ...read, functionName: 'getBorrowRate', args: [utilization], ...at }),
      client.readContract({ ...read, functionName: 'getSupplyRate', args: [utilization], ...at }),
    ]);
    expect(utilization).toBeGreaterThan(0n);
    expect(borrowRate).toBeGreaterThan(supplyRate);
    expect(supplyRate).toBeGreaterThan(0n);

    await rpc('evm_increaseTime', [30 * 86_400]);
    await rpc('evm_mine');
    const block = await client.getBlock();
    const elapsed = block.timestamp - BigInt(totals.lastAccrualTime);
    expect(elapsed).toBeGreaterThanOrEqual(30n * 86_400n);
    const grown = (index: bigint, rate: bigint) => index + (index * rate * elapsed) / FACTOR_SCALE;
    const borrowIndex = grown(totals.baseBorrowIndex, borrowRate);
    const supplyIndex = grown(totals.baseSupplyIndex, supplyRate);
    const now = { blockNumber: block.number };
    const debt = await client.readContract({ ...read, functionName: 'borrowBalanceOf', args: [borrower.address], ...now });
    const supplied = await client.readContract({ ...read, functionName: 'balanceOf', args: [supplier.address], ...now });
    expect(debt).toBe((-b[0] * borrowIndex) / BASE_INDEX_SCALE);
    expect(supplied).toBe((s[0] * supplyIndex) / BASE_INDEX_SCALE);
    // ≈ 15,000 USDC at ≈ 1.6 %/year for 30 days: about 20 USDC.
    expect(debt - usdc('15000')).toBeGreaterThan(usdc('10'));
    expect(supplied).toBeGreaterThan(usdc('5000'));

    // accrueAccount writes the indices as the views projected them (one more second has passed by then).
    const receipt = recorded('accrueAccount', await borrower.wallet.writeContractSync({ ...read, functionName: 'accrueAccount', args: [borrower.address], gas: GAS }));
    const accrued = await client.readContract({ ...read, functionName: 'totalsBasic', blockNumber: receipt.blockNumber });
    const mined = await client.getBlock({ blockNumber: receipt.blockNumber });
    expect(BigInt(accrued.lastAccrualTime)).toBe(mined.timestamp);
    const elapsedToAccrual = mined.timestamp - BigInt(totals.lastAccrualTime);
    expect(accrued.baseBorrowIndex).toBe(totals.baseBorrowIndex + (totals.baseBorrowIndex * borrowRate * elapsedToAccrual) / FACTOR_SCALE);
    expect(accrued.baseSupplyIndex).toBe(totals.baseSupplyIndex + (totals.baseSupplyIndex * supplyRate * elapsedToAccrual) / FACTOR_SCALE);
  });

  test('a drop in the WETH price makes the borrow liquidatable; back up, it is not', async () => {
    const { priceFeed } = await assetInfo();
    const owner = devnetWalletClient(devnetChain(base), protocolDeployer.privateKey);
    const setPrice = (usd: bigint) => owner.writeContractSync({ address: priceFeed, abi: devnetPriceFeedAbi, functionName: 'setAnswer', args: [usd * 10n ** 8n] });
    try {
      // 10 WETH × 1900 USD: 14,725 USDC at the borrow factor, 15,675 at the liquidate factor, ≈ 15,020 owed.
      await setPrice(1900n);
      expect(await client.readContract({ ...read, functionName: 'isBorrowCollateralized', args: [borrower.address] })).toBe(false);
      expect(await client.readContract({ ...read, functionName: 'isLiquidatable', args: [borrower.address] })).toBe(false);
      // 10 WETH × 1800 USD × 0.825 = 14,850 USDC: under the ≈ 15,020 owed.
      await setPrice(1800n);
      expect(await client.readContract({ ...read, functionName: 'getPrice', args: [priceFeed] })).toBe(1800n * 10n ** 8n);
      expect(await client.readContract({ ...read, functionName: 'isLiquidatable', args: [borrower.address] })).toBe(true);
      expect(await client.readContract({ ...read, functionName: 'isBorrowCollateralized', args: [borrower.address] })).toBe(false);
      expect(await revertOf(simulate(borrower, 'withdraw', USDC, usdc('1')))).toBe('NotCollateralized');
      await setPrice(0n);
      expect(await revertOf(client.readContract({ ...read, functionName: 'isLiquidatable', args: [borrower.address] }))).toBe('BadPrice');
    } finally {
      await setPrice(3000n);
    }
    expect(await client.readContract({ ...read, functionName: 'isLiquidatable', args: [borrower.address] })).toBe(false);
  });

  test('supply(USDC, max) repays the whole borrow, interest included, to exactly zero', async () => {
    const usdcBefore = await balance(USDC, borrower.address);
    const borrowsBefore = await client.readContract({ ...read, functionName: 'totalsBasic' });
    const receipt = recorded('supply(USDC, max) repay', await write(borrower, 'supply', USDC, maxUint256));
    const [event, ...others] = cometEvents(receipt);
    expect(others).toEqual([]); // nothing supplied beyond the debt: no Transfer
    expect(event).toMatchObject({ eventName: 'Supply', args: { from: borrower.address, dst: borrower.address } });
    const repaid = (event!.args as { amount: bigint }).amount;
    expect(repaid).toBeGreaterThan(usdc('15010'));
    expect(usdcBefore - (await balance(USDC, borrower.address))).toBe(repaid);
    expect(await client.readContract({ ...read, functionName: 'borrowBalanceOf', args: [borrower.address] })).toBe(0n);
    expect((await client.readContract({ ...read, functionName: 'userBasic', args: [borrower.address] }))[0]).toBe(0n);
    const borrowsAfter = await client.readContract({ ...read, functionName: 'totalsBasic' });
    expect(borrowsAfter.totalBorrowBase).toBeLessThan(borrowsBefore.totalBorrowBase);
  });

  test('withdraw(WETH) takes the collateral back once nothing is owed', async () => {
    const receipt = recorded('withdraw(WETH, 10) collateral', await write(borrower, 'withdraw', WETH, weth('10')));
    expect(cometEvents(receipt)).toEqual([
      { eventName: 'WithdrawCollateral', args: { src: borrower.address, to: borrower.address, asset: WETH, amount: weth('10') } },
    ]);
    expect(await balance(WETH, borrower.address)).toBe(weth('10'));
    expect(await client.readContract({ ...read, functionName: 'collateralBalanceOf', args: [borrower.address, WETH] })).toBe(0n);
    expect((await client.readContract({ ...read, functionName: 'userBasic', args: [borrower.address] }))[3]).toBe(0); // assetsIn
  });

  test('withdraw(USDC, max) takes the whole supplied balance, interest included', async () => {
    const usdcBefore = await balance(USDC, supplier.address);
    const receipt = recorded('withdraw(USDC, max) base', await write(supplier, 'withdraw', USDC, maxUint256));
    const [withdrawn, transfer] = cometEvents(receipt);
    expect(withdrawn).toMatchObject({ eventName: 'Withdraw', args: { src: supplier.address, to: supplier.address } });
    expect(transfer).toMatchObject({ eventName: 'Transfer', args: { from: supplier.address, to: '0x0000000000000000000000000000000000000000' } });
    const amount = (withdrawn!.args as { amount: bigint }).amount;
    expect(amount).toBeGreaterThan(usdc('5000'));
    expect((await balance(USDC, supplier.address)) - usdcBefore).toBe(amount);
    expect(await client.readContract({ ...read, functionName: 'balanceOf', args: [supplier.address] })).toBe(0n);
    expect((await client.readContract({ ...read, functionName: 'userBasic', args: [supplier.address] }))[0]).toBe(0n);
  });

  test('a collateral supply past the supply cap reverts SupplyCapExceeded()', async () => {
    const [{ supplyCap }, [total]] = await Promise.all([assetInfo(), client.readContract({ ...read, functionName: 'totalsCollateral', args: [WETH] })]);
    const over = supplyCap - total + 1n;
    await borrower.mint('WETH', borrower.address, over);
    expect(await revertOf(simulate(borrower, 'supply', WETH, over))).toBe('SupplyCapExceeded');
  });

  test("a borrow beyond the Comet's cash fails in the token's own transfer, as on the real Comet", async () => {
    const whale = await newPayer(devnet, CHAIN);
    await whale.mint('WETH', whale.address, weth('1000')); // 2,325,000 USDC of capacity
    await whale.wallet.writeContractSync({ address: WETH, abi: testStablecoinAbi, functionName: 'approve', args: [comet, maxUint256] });
    await write(whale, 'supply', WETH, weth('1000'));
    const cash = await balance(USDC, comet);
    expect(await revertOf(simulate(whale, 'withdraw', USDC, cash + 1n))).toBe('ERC20: transfer amount exceeds balance');
    await simulate(whale, 'withdraw', USDC, cash);
  });

  test('the deploy again deploys nothing and returns the same config', async () => {
    const started = performance.now();
    const result = await compoundV3.deploy({
      chain: devnetChain(base),
      name: CHAIN,
      deployer: protocolDeployer,
      funded: devnet.manifest.accounts.funded,
      tokens: base.tokens,
      log: () => undefined,
    });
    console.log(`compoundV3 deploy on the run's devnet (a reload): ${Math.round(performance.now() - started)} ms`);
    expect(result).toEqual({ deployed: [], config: base.protocols?.compoundV3 });
  });
});

describe('compoundV3 deployment on a fresh chain', () => {
  test('same addresses as the run devnet; a reload sends nothing; a partly deployed chain is finished', async () => {
    const accounts = devnetAccounts();
    const node = await startAnvil({ chainId: base.chainId, marker: `compoundV3-test-${process.pid}`, accounts: ANVIL_ACCOUNT_COUNT });
    try {
      const chain = devnetChain({ chainId: node.chainId, name: CHAIN, rpcUrl: node.rpcUrl });
      const fresh = devnetPublicClient(chain);
      await deployChain({ chain, accounts, log: () => undefined });
      const ctx = { chain, name: CHAIN, deployer: accounts.protocolDeployer, funded: accounts.funded, tokens: base.tokens, log: () => undefined } as const;
      const plan = cometDeployments({ tokens: base.tokens, owner: accounts.protocolDeployer.address });
      const seed = 'seed supply of 1000000 USDC';
      const snapshot = async () => (await fresh.request({ method: 'evm_snapshot' } as never)) as Hex;
      let bare = await snapshot();
      const timed = async () => {
        const started = performance.now();
        const result = await compoundV3.deploy(ctx);
        return { ...result, ms: Math.round(performance.now() - started) };
      };

      const first = await timed();
      expect(first.deployed).toEqual([...plan.all.map((d) => d.label), seed]);
      expect(first.config).toEqual(base.protocols?.compoundV3);
      const reload = await timed();
      expect(reload.deployed).toEqual([]);
      expect(reload.config).toEqual(first.config);
      console.log(`compoundV3 deploy on a fresh chain: ${first.ms} ms; reload: ${reload.ms} ms`);

      // Stopped after the first feed; then after all the contracts but before the seed.
      const installer = devnetWalletClient(chain, accounts.installer.privateKey);
      for (const done of [1, plan.all.length]) {
        expect(await fresh.request({ method: 'evm_revert', params: [bare] } as never)).toBe(true);
        bare = await snapshot();
        for (const d of plan.all.slice(0, done)) await installer.sendTransactionSync({ to: CREATE2_DEPLOYER, data: concat([d.salt, d.initCode]) });
        const finished = await compoundV3.deploy(ctx);
        expect(finished.deployed).toEqual([...plan.all.slice(done).map((d) => d.label), seed]);
        expect(finished.config).toEqual(first.config);
        expect(await fresh.readContract({ ...read, address: plan.comet.address, functionName: 'balanceOf', args: [accounts.protocolDeployer.address] })).toBe(
          USDC_MARKET.seedSupply,
        );
      }
    } finally {
      await node.stop();
    }
  });
});

/**
 * The real Comet's signatures (compound-finance/comet: contracts/CometMainInterface.sol, CometExtInterface.sol and
 * the public getters of CometStorage.sol), written out here as the reference abi.ts must match.
 */
const REAL_COMET = parseAbi([
  'function supply(address asset, uint amount)',
  'function supplyTo(address dst, address asset, uint amount)',
  'function withdraw(address asset, uint amount)',
  'function withdrawTo(address to, address asset, uint amount)',
  'function accrueAccount(address account)',
  'function balanceOf(address owner) view returns (uint256)',
  'function borrowBalanceOf(address account) view returns (uint256)',
  'function collateralBalanceOf(address account, address asset) view returns (uint128)',
  'function userBasic(address) view returns (int104 principal, uint64 baseTrackingIndex, uint64 baseTrackingAccrued, uint16 assetsIn, uint8 _reserved)',
  'function userCollateral(address, address) view returns (uint128 balance, uint128 _reserved)',
  'function isBorrowCollateralized(address account) view returns (bool)',
  'function isLiquidatable(address account) view returns (bool)',
  'function totalSupply() view returns (uint256)',
  'function totalBorrow() view returns (uint256)',
  'function totalsBasic() view returns ((uint64 baseSupplyIndex, uint64 baseBorrowIndex, uint64 trackingSupplyIndex, uint64 trackingBorrowIndex, uint104 totalSupplyBase, uint104 totalBorrowBase, uint40 lastAccrualTime, uint8 pauseFlags))',
  'function totalsCollateral(address) view returns (uint128 totalSupplyAsset, uint128 _reserved)',
  'function getUtilization() view returns (uint)',
  'function getSupplyRate(uint utilization) view returns (uint64)',
  'function getBorrowRate(uint utilization) view returns (uint64)',
  'function getPrice(address priceFeed) view returns (uint256)',
  'function getAssetInfo(uint8 i) view returns ((uint8 offset, address asset, address priceFeed, uint64 scale, uint64 borrowCollateralFactor, uint64 liquidateCollateralFactor, uint64 liquidationFactor, uint128 supplyCap))',
  'function getAssetInfoByAddress(address asset) view returns ((uint8 offset, address asset, address priceFeed, uint64 scale, uint64 borrowCollateralFactor, uint64 liquidateCollateralFactor, uint64 liquidationFactor, uint128 supplyCap))',
  'function isSupplyPaused() view returns (bool)',
  'function isWithdrawPaused() view returns (bool)',
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
  'function baseToken() view returns (address)',
  'function baseTokenPriceFeed() view returns (address)',
  'function baseScale() view returns (uint)',
  'function baseBorrowMin() view returns (uint)',
  'function numAssets() view returns (uint8)',
  'function baseIndexScale() view returns (uint64)',
  'function factorScale() view returns (uint64)',
  'function priceScale() view returns (uint64)',
  'function supplyKink() view returns (uint)',
  'function supplyPerSecondInterestRateSlopeLow() view returns (uint)',
  'function supplyPerSecondInterestRateSlopeHigh() view returns (uint)',
  'function supplyPerSecondInterestRateBase() view returns (uint)',
  'function borrowKink() view returns (uint)',
  'function borrowPerSecondInterestRateSlopeLow() view returns (uint)',
  'function borrowPerSecondInterestRateSlopeHigh() view returns (uint)',
  'function borrowPerSecondInterestRateBase() view returns (uint)',
  'event Supply(address indexed from, address indexed dst, uint amount)',
  'event Transfer(address indexed from, address indexed to, uint amount)',
  'event Withdraw(address indexed src, address indexed to, uint amount)',
  'event SupplyCollateral(address indexed from, address indexed dst, address indexed asset, uint amount)',
  'event WithdrawCollateral(address indexed src, address indexed to, address indexed asset, uint amount)',
]);

/** Selectors as the real Comet's compiled ABI has them (abigen bindings of Comet, scripts reading Comets): a check on the list above. */
const KNOWN_SELECTORS: Record<string, Hex> = {
  'supply(address,uint256)': '0xf2b9fdb8',
  'withdraw(address,uint256)': '0xf3fef3a3',
  'borrowBalanceOf(address)': '0x374c49b4',
  'collateralBalanceOf(address,address)': '0x5c2549ee',
  'getAssetInfo(uint8)': '0xc8c7fe6b',
};

const functionsOf = (abi: Abi): AbiFunction[] => abi.filter((x): x is AbiFunction => x.type === 'function');
const signature = (f: AbiFunction) => `${f.name}(${f.inputs.map((i) => i.type).join(',')})`;
/** A parameter list with names and struct fields, e.g. `(uint8 offset,address asset,…) ` for getAssetInfo. */
const shape = (params: readonly AbiParameter[]): string =>
  params
    .map((p) => {
      const fields = 'components' in p ? `(${shape(p.components)})` : '';
      return `${fields ? fields + p.type.slice('tuple'.length) : p.type} ${p.name ?? ''}`.trim();
    })
    .join(',');
const outputs = (f: AbiFunction) => shape(f.outputs);
/** Events with their topic and what decoding needs besides it: which arguments are indexed, and their names. */
const eventsOf = (abi: Abi) =>
  abi
    .filter((x) => x.type === 'event')
    .map((e) => `${toEventSelector(e)} ${e.name}(${e.inputs.map((i) => `${i.type}${i.indexed ? ' indexed' : ''} ${i.name}`).join(',')})`)
    .sort();

describe('the ABI surface', () => {
  test("abi.ts has the real Comet's selectors, return types, events and error names", () => {
    const ours = functionsOf(cometAbi);
    const real = new Map(functionsOf(REAL_COMET).map((f) => [toFunctionSelector(f), f]));
    expect(ours.map(signature).sort()).toEqual([...real.values()].map(signature).sort());
    for (const f of ours) {
      const twin = real.get(toFunctionSelector(f));
      expect(twin, signature(f)).toBeDefined();
      expect(outputs(f), signature(f)).toBe(outputs(twin!));
      expect(f.stateMutability, signature(f)).toBe(twin!.stateMutability);
    }
    for (const [sig, selector] of Object.entries(KNOWN_SELECTORS)) expect(toFunctionSelector(`function ${sig}`), sig).toBe(selector);

    expect(eventsOf(cometAbi)).toEqual(eventsOf(REAL_COMET));
    const errors = cometAbi.filter((x) => x.type === 'error').map((e) => e.name);
    for (const name of ['NotCollateralized', 'BorrowTooSmall', 'InsufficientReserves', 'SupplyCapExceeded', 'BadAsset', 'BadPrice', 'Paused']) expect(errors).toContain(name);
  });

  test('DevnetComet implements every function of abi.ts with the same outputs, and raises only errors abi.ts decodes', () => {
    const artifact = cometArtifact.abi as Abi;
    const compiled = new Map(functionsOf(artifact).map((f) => [toFunctionSelector(f), f]));
    for (const f of functionsOf(cometAbi)) {
      const impl = compiled.get(toFunctionSelector(f));
      expect(impl, `DevnetComet lacks ${signature(f)}`).toBeDefined();
      expect(outputs(impl!), signature(f)).toBe(outputs(f));
      const reads = (m: string) => m === 'view' || m === 'pure';
      expect(reads(impl!.stateMutability), signature(f)).toBe(reads(f.stateMutability));
    }
    // Nothing beyond the real surface: the devnet must not let a client depend on a function the real Comet lacks.
    expect(compiled.size).toBe(functionsOf(cometAbi).length);
    expect(eventsOf(artifact)).toEqual(eventsOf(cometAbi));
    const errors = (abi: Abi) => abi.filter((x) => x.type === 'error').map((x) => toFunctionSelector(x as never));
    for (const selector of errors(artifact)) expect(errors(cometAbi)).toContain(selector);
  });
});
