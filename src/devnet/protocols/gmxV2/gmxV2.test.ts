/**
 * The devnet's GMX v2 (contracts/DevnetGmx*.sol, the keeper and the price server) on a devnet of this file's own, driven
 * only through GMX's real ABIs (src/protocols/gmxV2/abis.generated.ts) from an EOA: the multicall that creates
 * an order, its simulation, the keeper's execution, the Reader's position with its fees after time passes, the
 * decrease that pays out, the cancellation of an order whose acceptable price is not met, the execution fee
 * check, the price server's routes, and the DataStore keys against the SDK's. Its own devnet, since it moves the
 * chain's clock and the price feeds.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  BaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  decodeEventLog,
  encodeFunctionData,
  isAddressEqual,
  maxUint256,
  parseUnits,
  zeroAddress,
  zeroHash,
  type Address,
  type Hex,
  type Log,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { rmSync } from 'node:fs';
import { devnetClients, tempDir } from '../../../../test/support/env.ts';
import { loadManifest, startDevnet } from '../../devnet.ts';
import { newPayer } from '../../../../test/support/payer.ts';
import { requireGmxSdk } from '../../../../scripts/lib/gmxSdk.ts';
import { devnetPriceFeedAbi, testStablecoinAbi } from '../../contracts.ts';
import { customErrorsAbi, dataStoreAbi, eventEmitterAbi, exchangeRouterAbi, readerAbi } from '../../../protocols/gmxV2/abis.generated.ts';
import { ANVIL_ACCOUNT_COUNT, devnetAccounts } from '../../accounts.ts';
import { startAnvil } from '../../anvil.ts';
import { devnetChain, devnetWalletClient } from '../../clients.ts';
import { deployChain } from '../../deploy.ts';
import { devnetGmxAbis, gmxDeployments } from './deployments.ts';
import { gmxV2 } from './index.ts';
import { dsKeys, keyOf } from './keys.ts';
import { GLOBAL_PARAMS } from './market.ts';

// Its own devnet: these tests move the chain's clock (evm_increaseTime) and its price feeds, which the run's shared
// devnet must not see (other files execute on arbitrum meanwhile, with sponsorships valid for minutes).
const ownDir = tempDir('aw-gmx-devnet-');
const own = await startDevnet({ dataDir: ownDir, log: () => undefined });
afterAll(async () => {
  await own.stop();
  rmSync(ownDir, { recursive: true, force: true });
});
const devnet = devnetClients(loadManifest(own.manifestPath), own.manifestPath);
const CHAIN = 'arbitrum';
const arbitrum = devnet.chain(CHAIN);
const client = devnet.publicClient(CHAIN);
const config = arbitrum.protocols!.gmxV2!;
const token = (symbol: string): Address => arbitrum.tokens.find((t) => t.symbol === symbol)!.address;
const WETH = token('WETH');
const USDC = token('USDC');
const market = config.markets![0]!;
const usdc = (amount: string): bigint => parseUnits(amount, 6);
const usd = (amount: string): bigint => parseUnits(amount, 30);
/** GMX's per-unit price of WETH (18 decimals) at $3000: 3000 × 10^12. */
const ETH_PRICE = parseUnits('3000', 12);
const USDC_PRICE = parseUnits('1', 24);
const routerAbi = [...exchangeRouterAbi, ...customErrorsAbi] as const;
const rpc = <T>(method: string, params: unknown[] = []): Promise<T> => client.request({ method, params } as never) as Promise<T>;

const sdkKeys = requireGmxSdk<Record<string, Hex> & {
  positionFeeFactorKey(market: Address, forPositiveImpact: boolean): Hex;
  openInterestKey(market: Address, collateral: Address, isLong: boolean): Hex;
  poolAmountKey(market: Address, token: Address): Hex;
  borrowingFactorKey(market: Address, isLong: boolean): Hex;
  fundingFactorKey(market: Address): Hex;
  accountOrderListKey(account: Address): Hex;
  claimableFundingAmountKey(market: Address, token: Address, account: Address): Hex;
  hashedPositionKey(account: Address, market: Address, collateral: Address, isLong: boolean): Hex;
}>('build/cjs/src/configs/dataStore.js');

/** The custom error a call reverts with, decoded with the ExchangeRouter's and GMX's custom errors ABI. */
async function revertOf(call: Promise<unknown>): Promise<{ name: string; args: readonly unknown[] }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof BaseError)) throw new Error(`expected a revert, got ${String(error)}`);
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
  if (reverted?.data) return { name: reverted.data.errorName, args: reverted.data.args ?? [] };
  const raw = (error.walk((e) => typeof (e as { data?: unknown }).data === 'string') as { data?: Hex } | null)?.data;
  if (!raw) throw new Error(`no revert data in ${error.message}`);
  const decoded = decodeErrorResult({ abi: customErrorsAbi, data: raw });
  return { name: decoded.errorName, args: decoded.args ?? [] };
}

/** The EventEmitter's EventLog1/EventLog2 in some logs, decoded: name, topics and items by key. */
function gmxEvents(logs: readonly Log[]) {
  return logs
    .filter((l) => isAddressEqual(l.address, config.eventEmitter))
    .map((l) => {
      const e = decodeEventLog({ abi: eventEmitterAbi, data: l.data, topics: l.topics });
      const args = e.args as unknown as {
        eventName: string;
        topic1?: Hex;
        topic2?: Hex;
        eventData: Record<string, { items: readonly { key: string; value: unknown }[] }>;
      };
      const item = (kind: string, key: string): unknown => args.eventData[kind]!.items.find((i) => i.key === key)?.value;
      return { name: args.eventName, topic1: args.topic1, topic2: args.topic2, item };
    });
}

const emitterLogs = (fromBlock: bigint) => client.getLogs({ address: config.eventEmitter, fromBlock });
const isPending = (key: Hex) => client.readContract({ address: config.dataStore, abi: dataStoreAbi, functionName: 'containsBytes32', args: [dsKeys.orderList, key] });

/** Waits for the keeper (another process: the devnet's) to take the order off ORDER_LIST. */
async function keeperTook(key: Hex): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (await isPending(key)) {
    if (Date.now() > deadline) throw new Error(`the keeper did not process order ${key} within 15 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const marketPrices = { indexTokenPrice: { min: ETH_PRICE, max: ETH_PRICE }, longTokenPrice: { min: ETH_PRICE, max: ETH_PRICE }, shortTokenPrice: { min: USDC_PRICE, max: USDC_PRICE } };

describe('gmxV2 on the devnet (through the real GMX v2 ABIs)', () => {
  let trader: Awaited<ReturnType<typeof newPayer>>;
  let executionFee: bigint;

  const orderParams = (p: { orderType: number; sizeDeltaUsd: bigint; acceptablePrice: bigint; collateralDelta?: bigint; fee?: bigint; trigger?: bigint; isLong?: boolean }) => ({
    addresses: {
      receiver: trader.address,
      cancellationReceiver: zeroAddress,
      callbackContract: zeroAddress,
      uiFeeReceiver: zeroAddress,
      market,
      initialCollateralToken: USDC,
      swapPath: [],
    },
    numbers: {
      sizeDeltaUsd: p.sizeDeltaUsd,
      initialCollateralDeltaAmount: p.collateralDelta ?? 0n,
      triggerPrice: p.trigger ?? 0n,
      acceptablePrice: p.acceptablePrice,
      executionFee: p.fee ?? executionFee,
      callbackGasLimit: 0n,
      minOutputAmount: 0n,
      validFromTime: 0n,
    },
    orderType: p.orderType,
    decreasePositionSwapType: 0,
    isLong: p.isLong ?? true,
    shouldUnwrapNativeToken: false,
    autoCancel: false,
    referralCode: zeroHash,
    dataList: [],
  });
  const call = (functionName: string, args: unknown[]): Hex => encodeFunctionData({ abi: exchangeRouterAbi, functionName, args } as never);
  /** sendWnt(fee) + sendTokens(USDC collateral) + createOrder, as GMX's UI sends them. */
  const createCalls = (p: Parameters<typeof orderParams>[0]): Hex[] => [
    call('sendWnt', [config.orderVault, p.fee ?? executionFee]),
    ...(p.collateralDelta ? [call('sendTokens', [USDC, config.orderVault, p.collateralDelta])] : []),
    call('createOrder', [orderParams(p)]),
  ];
  const simulate = [call('simulateExecuteLatestOrder', [{ primaryTokens: [WETH, USDC], primaryPrices: [{ min: ETH_PRICE, max: ETH_PRICE }, { min: USDC_PRICE, max: USDC_PRICE }], minTimestamp: 0n, maxTimestamp: 0n }])];
  /** Sends the multicall and returns the new order's key (OrderCreated's topic1) and the block it is in. */
  const createOrder = async (p: Parameters<typeof orderParams>[0]) => {
    const receipt = await trader.wallet.writeContractSync({
      address: config.exchangeRouter,
      abi: exchangeRouterAbi,
      functionName: 'multicall',
      args: [createCalls(p)],
      value: p.fee ?? executionFee,
      gas: 3_000_000n,
    });
    expect(receipt.status).toBe('success');
    const created = gmxEvents(receipt.logs).find((e) => e.name === 'OrderCreated');
    expect(created?.topic2).toBe(`0x${trader.address.slice(2).toLowerCase().padStart(64, '0')}`);
    return { key: created!.topic1!, block: receipt.blockNumber };
  };
  const usdcBalance = () => client.readContract({ address: USDC, abi: testStablecoinAbi, functionName: 'balanceOf', args: [trader.address] });
  const positionKey = () => sdkKeys.hashedPositionKey(trader.address, market, USDC, true);

  beforeAll(async () => {
    trader = await newPayer(devnet, CHAIN);
    await trader.mint('USDC', trader.address, usdc('5000'));
    await trader.wallet.writeContractSync({ address: USDC, abi: testStablecoinAbi, functionName: 'approve', args: [config.router, maxUint256] });
    // GasUtils' estimate: (base + 3 oracle prices + the order's gas limit) × gas price, with headroom.
    const gasLimit = GLOBAL_PARAMS.ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1 + 3n * GLOBAL_PARAMS.ESTIMATED_GAS_FEE_PER_ORACLE_PRICE + GLOBAL_PARAMS.INCREASE_ORDER_GAS_LIMIT;
    executionFee = gasLimit * (await client.getGasPrice()) * 2n;
  });

  test('the manifest config is the planned deployment, the ExchangeRouter a CONTROLLER of its RoleStore', async () => {
    const plan = gmxDeployments({ tokens: arbitrum.tokens, owner: devnet.manifest.accounts.protocolDeployer!.address });
    expect(config).toMatchObject({
      dataStore: plan.dataStore.address,
      exchangeRouter: plan.exchangeRouter.address,
      reader: plan.reader.address,
      router: plan.router.address,
      orderVault: plan.orderVault.address,
      eventEmitter: plan.eventEmitter.address,
      wnt: WETH,
      markets: [plan.market.marketToken],
    });
    expect(config.oracleUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const roleStore = await client.readContract({ address: config.exchangeRouter, abi: exchangeRouterAbi, functionName: 'roleStore' });
    const hasRole = await client.readContract({
      address: roleStore,
      abi: [{ type: 'function', name: 'hasRole', stateMutability: 'view', inputs: [{ type: 'address' }, { type: 'bytes32' }], outputs: [{ type: 'bool' }] }] as const,
      functionName: 'hasRole',
      args: [config.exchangeRouter, keyOf('CONTROLLER')],
    });
    expect(hasRole).toBe(true);
    const markets = await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getMarkets', args: [config.dataStore, 0n, 10n] });
    expect(markets).toEqual([{ marketToken: market, indexToken: WETH, longToken: WETH, shortToken: USDC }]);
  });

  test("the DataStore's keys are the SDK's (its key names and composite keys), and hold the devnet's config", async () => {
    const names = ['ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1', 'INCREASE_ORDER_GAS_LIMIT_KEY', 'ORDER_LIST_KEY', 'POSITION_LIST_KEY', 'NONCE_KEY', 'MIN_COLLATERAL_USD_KEY'];
    for (const name of names) {
      expect(sdkKeys[name], name).toMatch(/^0x[0-9a-f]{64}$/);
      expect(keyOf(name.replace(/_KEY$/, '')), name).toBe(sdkKeys[name]);
    }
    expect(dsKeys.marketFlag('POSITION_FEE_FACTOR', market, true)).toBe(sdkKeys.positionFeeFactorKey(market, true));
    const getUint = (key: Hex) => client.readContract({ address: config.dataStore, abi: dataStoreAbi, functionName: 'getUint', args: [key] });
    expect(await getUint(sdkKeys.positionFeeFactorKey(market, true))).toBe(parseUnits('0.0005', 30));
    expect(await getUint(sdkKeys.borrowingFactorKey(market, true))).toBeGreaterThan(0n);
    expect(await getUint(sdkKeys.fundingFactorKey(market))).toBeGreaterThan(0n);
    expect(await getUint(sdkKeys.poolAmountKey(market, USDC))).toBeGreaterThan(0n);
    expect(await getUint(sdkKeys.ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1!)).toBe(GLOBAL_PARAMS.ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1);
  });

  test('the price server answers /prices/tickers (30-decimal per-unit prices, read from the feeds) and /tokens', async () => {
    const tickers = (await (await fetch(`${config.oracleUrl}/prices/tickers`)).json()) as { tokenAddress: string; tokenSymbol: string; minPrice: string; maxPrice: string }[];
    expect(tickers.map((t) => t.tokenSymbol).sort()).toEqual(['USDC', 'WETH']);
    const eth = tickers.find((t) => t.tokenSymbol === 'WETH')!;
    expect(eth).toMatchObject({ tokenAddress: WETH, minPrice: ETH_PRICE.toString(), maxPrice: ETH_PRICE.toString() });
    const tokens = (await (await fetch(`${config.oracleUrl}/tokens`)).json()) as { tokens: { symbol: string; address: string; decimals: number }[] };
    expect(tokens.tokens).toContainEqual({ symbol: 'USDC', address: USDC, decimals: 6, synthetic: false });
    const missing = await fetch(`${config.oracleUrl}/prices/candles`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: string }).error).toBe('not_found');
  });

  test('createOrder refuses a fee below the estimate at the gas price with InsufficientExecutionFee', async () => {
    const gasPrice = parseUnits('1', 9);
    const failure = await revertOf(
      client.simulateContract({
        account: trader.address,
        address: config.exchangeRouter,
        abi: routerAbi,
        functionName: 'multicall',
        args: [createCalls({ orderType: 2, sizeDeltaUsd: usd('1000'), acceptablePrice: maxUint256, collateralDelta: usdc('100'), fee: 1n })],
        value: 1n,
        gasPrice,
      }),
    );
    const minFee = (GLOBAL_PARAMS.ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1 + 3n * GLOBAL_PARAMS.ESTIMATED_GAS_FEE_PER_ORACLE_PRICE + GLOBAL_PARAMS.INCREASE_ORDER_GAS_LIMIT) * gasPrice;
    expect(failure).toEqual({ name: 'InsufficientExecutionFee', args: [minFee, 1n] });
  });

  test('a long increase: simulated (EndOfOracleSimulation), executed by the keeper, the Reader shows fees after an hour; a decrease pays out', async () => {
    const increase = { orderType: 2, sizeDeltaUsd: usd('10000'), acceptablePrice: (ETH_PRICE * 101n) / 100n, collateralDelta: usdc('1000') };
    // The UI's check: the whole multicall with simulateExecuteLatestOrder in an eth_call.
    const simulated = await revertOf(
      client.simulateContract({ account: trader.address, address: config.exchangeRouter, abi: routerAbi, functionName: 'multicall', args: [[...createCalls(increase), ...simulate]], value: executionFee }),
    );
    expect(simulated.name).toBe('EndOfOracleSimulation');
    const before = await usdcBalance();
    const { key, block } = await createOrder(increase);
    expect(await usdcBalance()).toBe(before - usdc('1000'));
    const order = await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getOrder', args: [config.dataStore, key] });
    expect(order.addresses.account).toBe(trader.address);
    expect(order.numbers).toMatchObject({ orderType: 2, sizeDeltaUsd: usd('10000'), initialCollateralDeltaAmount: usdc('1000'), executionFee });

    await keeperTook(key);
    const events = gmxEvents(await emitterLogs(block));
    const increased = events.find((e) => e.name === 'PositionIncrease' && e.item('bytes32Items', 'orderKey') === key);
    expect(increased, 'PositionIncrease').toBeDefined();
    expect(increased!.item('uintItems', 'sizeDeltaUsd')).toBe(usd('10000'));
    expect(increased!.item('bytes32Items', 'positionKey')).toBe(positionKey());
    const priceImpactUsd = increased!.item('intItems', 'priceImpactUsd') as bigint;
    expect(priceImpactUsd).toBeLessThan(0n); // the long side grows: negative impact
    expect(increased!.item('uintItems', 'executionPrice') as bigint).toBeGreaterThan(ETH_PRICE);
    expect(events.find((e) => e.name === 'OrderExecuted' && e.topic1 === key)).toBeDefined();

    const openInterest = await client.readContract({ address: config.dataStore, abi: dataStoreAbi, functionName: 'getUint', args: [sdkKeys.openInterestKey(market, USDC, true)] });
    expect(openInterest).toBe(usd('10000'));
    const positions = await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getAccountPositions', args: [config.dataStore, trader.address, 0n, 10n] });
    expect(positions).toHaveLength(1);
    expect(positions[0]!.numbers.sizeInUsd).toBe(usd('10000'));

    await rpc('evm_increaseTime', [3600]);
    await rpc('evm_mine');
    const marketInfo = await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getMarketInfo', args: [config.dataStore, marketPrices, market] });
    expect(marketInfo.borrowingFactorPerSecondForLongs).toBeGreaterThan(0n);
    expect(marketInfo.nextFunding.longsPayShorts).toBe(true);
    expect(marketInfo.nextFunding.fundingFeeAmountPerSizeDelta.long.shortToken).toBeGreaterThan(0n);
    expect(await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getMarketInfoList', args: [config.dataStore, [marketPrices], 0n, 10n] })).toEqual([marketInfo]);
    const more = await client.readContract({
      address: config.reader,
      abi: readerAbi,
      functionName: 'getExecutionPrice',
      args: [config.dataStore, market, marketPrices, 0n, 0n, usd('1000'), 0n, true],
    });
    expect(more.priceImpactUsd).toBeLessThan(0n); // more longs: a worse imbalance
    expect(more.executionPrice).toBeGreaterThan(ETH_PRICE);
    const infos = await client.readContract({
      address: config.reader,
      abi: readerAbi,
      functionName: 'getAccountPositionInfoList',
      args: [config.dataStore, config.referralStorage, trader.address, [market], [marketPrices], zeroAddress, 0n, 10n],
    });
    expect(infos.map((i) => i.positionKey)).toEqual([positionKey()]);
    const info = await client.readContract({
      address: config.reader,
      abi: readerAbi,
      functionName: 'getPositionInfo',
      args: [config.dataStore, config.referralStorage, positionKey(), marketPrices, 0n, zeroAddress, true],
    });
    expect(info.fees.borrowing.borrowingFeeUsd).toBeGreaterThan(0n);
    expect(info.fees.funding.fundingFeeAmount).toBeGreaterThan(0n);
    expect(info.fees.positionFeeAmount).toBe(usdc('5')); // 0.05% of $10,000: closing the only long improves the balance
    expect(info.fees.collateralTokenPrice).toEqual({ min: USDC_PRICE, max: USDC_PRICE });
    // PnL at the entry's oracle price: the tokens bought at the impacted price are worth a little less.
    expect(info.basePnlUsd).toBeLessThan(0n);
    expect(info.pnlAfterPriceImpactUsd).toBe(info.basePnlUsd + info.executionPriceResult.priceImpactUsd);

    const balanceBeforeClose = await usdcBalance();
    const close = await createOrder({ orderType: 4, sizeDeltaUsd: usd('10000'), acceptablePrice: 0n });
    await keeperTook(close.key);
    const decreased = gmxEvents(await emitterLogs(close.block)).find((e) => e.name === 'PositionDecrease' && e.item('bytes32Items', 'orderKey') === close.key);
    expect(decreased, 'PositionDecrease').toBeDefined();
    const payout = (await usdcBalance()) - balanceBeforeClose;
    expect(decreased!.item('uintItems', 'outputAmount')).toBe(payout);
    // The collateral less fees and the small loss: most of the 1,000 USDC, not all.
    expect(payout).toBeGreaterThan(usdc('980'));
    expect(payout).toBeLessThan(usdc('1000'));
    expect(await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getAccountPositions', args: [config.dataStore, trader.address, 0n, 10n] })).toEqual([]);
  });

  test('an order whose acceptable price is not met is cancelled by the keeper, with the reason, the collateral refunded', async () => {
    const feed = gmxDeployments({ tokens: arbitrum.tokens, owner: devnet.manifest.accounts.protocolDeployer!.address }).feeds.find((f) => f.symbol === 'WETH')!;
    expect(await client.readContract({ address: feed.deployment.address, abi: devnetPriceFeedAbi, functionName: 'latestAnswer' })).toBe(parseUnits('3000', 8));
    const before = await usdcBalance();
    const { key, block } = await createOrder({ orderType: 2, sizeDeltaUsd: usd('5000'), acceptablePrice: parseUnits('2900', 12), collateralDelta: usdc('500') });
    await keeperTook(key);
    const cancelled = gmxEvents(await emitterLogs(block)).find((e) => e.name === 'OrderCancelled' && e.topic1 === key);
    expect(cancelled, 'OrderCancelled').toBeDefined();
    expect(cancelled!.item('stringItems', 'reason')).toBe('OrderNotFulfillableAtAcceptablePrice');
    const reasonBytes = cancelled!.item('bytesItems', 'reasonBytes') as Hex;
    expect(decodeErrorResult({ abi: customErrorsAbi, data: reasonBytes }).errorName).toBe('OrderNotFulfillableAtAcceptablePrice');
    expect(await usdcBalance()).toBe(before);
    const orders = await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getAccountOrders', args: [config.dataStore, trader.address, 0n, 10n] });
    expect(orders).toEqual([]);
  });

  test('a short with WETH collateral (sendWnt carries fee and collateral), closed with shouldUnwrapNativeToken: paid in ETH', async () => {
    const receiver = privateKeyToAccount(generatePrivateKey()).address;
    const collateral = parseUnits('0.5', 18);
    const params = (p: { orderType: number; sizeDeltaUsd: bigint; acceptablePrice: bigint }) => ({
      ...orderParams(p),
      addresses: { ...orderParams(p).addresses, receiver, initialCollateralToken: WETH },
      isLong: false,
      shouldUnwrapNativeToken: true,
    });
    const send = async (calls: Hex[], value: bigint) => {
      const receipt = await trader.wallet.writeContractSync({ address: config.exchangeRouter, abi: exchangeRouterAbi, functionName: 'multicall', args: [calls], value, gas: 3_000_000n });
      const created = gmxEvents(receipt.logs).find((e) => e.name === 'OrderCreated')!;
      return { key: created.topic1!, block: receipt.blockNumber };
    };
    const open = await send([call('sendWnt', [config.orderVault, executionFee + collateral]), call('createOrder', [params({ orderType: 2, sizeDeltaUsd: usd('3000'), acceptablePrice: 0n })])], executionFee + collateral);
    const order = await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getOrder', args: [config.dataStore, open.key] });
    // GMX's recordTransferIn: the WNT collateral is what arrived less the execution fee.
    expect(order.numbers.initialCollateralDeltaAmount).toBe(collateral);
    await keeperTook(open.key);
    const short = sdkKeys.hashedPositionKey(trader.address, market, WETH, false);
    const info = await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getPositionInfo', args: [config.dataStore, config.referralStorage, short, marketPrices, 0n, zeroAddress, true] });
    expect(info.position.flags.isLong).toBe(false);
    expect(info.position.numbers.sizeInUsd).toBe(usd('3000'));

    const close = await send([call('sendWnt', [config.orderVault, executionFee]), call('createOrder', [params({ orderType: 4, sizeDeltaUsd: usd('3000'), acceptablePrice: maxUint256 })])], executionFee);
    await keeperTook(close.key);
    const decreased = gmxEvents(await emitterLogs(close.block)).find((e) => e.name === 'PositionDecrease' && e.item('bytes32Items', 'orderKey') === close.key)!;
    const payout = decreased.item('uintItems', 'outputAmount') as bigint;
    expect(payout).toBeGreaterThan(parseUnits('0.49', 18));
    expect(payout).toBeLessThan(collateral);
    // Unwrapped: the receiver holds ETH (the payout and the fee refunds), no WETH.
    expect(await client.readContract({ address: WETH, abi: testStablecoinAbi, functionName: 'balanceOf', args: [receiver] })).toBe(0n);
    expect(await client.getBalance({ address: receiver })).toBeGreaterThan(payout);
  });

  test('funding: with longs larger, a short earns claimable funding, credited when it closes, paid by claimFundingFees', async () => {
    const long = await createOrder({ orderType: 2, sizeDeltaUsd: usd('10000'), acceptablePrice: maxUint256, collateralDelta: usdc('1000') });
    await keeperTook(long.key);
    const short = await createOrder({ ...{ orderType: 2, sizeDeltaUsd: usd('2000'), acceptablePrice: 0n, collateralDelta: usdc('500') }, isLong: false });
    await keeperTook(short.key);
    await rpc('evm_increaseTime', [3600]);
    await rpc('evm_mine');
    const closeShort = await createOrder({ orderType: 4, sizeDeltaUsd: usd('2000'), acceptablePrice: maxUint256, isLong: false });
    await keeperTook(closeShort.key);
    const claimableKey = sdkKeys.claimableFundingAmountKey(market, USDC, trader.address);
    const claimable = await client.readContract({ address: config.dataStore, abi: dataStoreAbi, functionName: 'getUint', args: [claimableKey] });
    expect(claimable).toBeGreaterThan(0n);

    const before = await usdcBalance();
    const receipt = await trader.wallet.writeContractSync({ address: config.exchangeRouter, abi: exchangeRouterAbi, functionName: 'claimFundingFees', args: [[market], [USDC], trader.address] });
    expect(await usdcBalance()).toBe(before + claimable);
    const claimed = gmxEvents(receipt.logs).find((e) => e.name === 'FundingFeesClaimed')!;
    expect(claimed.item('uintItems', 'amount')).toBe(claimable);
    expect(await client.readContract({ address: config.dataStore, abi: dataStoreAbi, functionName: 'getUint', args: [claimableKey] })).toBe(0n);

    const closeLong = await createOrder({ orderType: 4, sizeDeltaUsd: usd('10000'), acceptablePrice: 0n });
    await keeperTook(closeLong.key);
    expect(await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getAccountPositions', args: [config.dataStore, trader.address, 0n, 10n] })).toEqual([]);
  });

  test('limit orders wait for their trigger; one failing is frozen, updateOrder unfreezes it, then it executes', async () => {
    const plan = gmxDeployments({ tokens: arbitrum.tokens, owner: devnet.manifest.accounts.protocolDeployer!.address });
    const feed = plan.feeds.find((f) => f.symbol === 'WETH')!.deployment.address;
    const owner = devnetWalletClient(devnetChain(arbitrum), devnet.manifest.accounts.protocolDeployer!.privateKey);
    const setEthPrice = (usdPrice: string) => owner.writeContractSync({ address: feed, abi: devnetPriceFeedAbi, functionName: 'setAnswer', args: [parseUnits(usdPrice, 8)] });
    const getOrder = (key: Hex) => client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getOrder', args: [config.dataStore, key] });

    // A long limit increase at $2950 while ETH is $3000: the keeper leaves it.
    const open = await createOrder({ orderType: 3, sizeDeltaUsd: usd('5000'), acceptablePrice: parseUnits('2960', 12), collateralDelta: usdc('500'), trigger: parseUnits('2950', 12) });
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await isPending(open.key)).toBe(true);
    await setEthPrice('2940');
    await keeperTook(open.key);
    const increased = gmxEvents(await emitterLogs(open.block)).find((e) => e.name === 'PositionIncrease' && e.item('bytes32Items', 'orderKey') === open.key);
    expect(increased, 'PositionIncrease').toBeDefined();
    expect(increased!.item('uintItems', 'executionPrice') as bigint).toBeLessThanOrEqual(parseUnits('2960', 12));

    // A limit decrease whose trigger ($2900) is passed but whose acceptable price ($3100) is not met: frozen.
    const close = await createOrder({ orderType: 5, sizeDeltaUsd: usd('5000'), acceptablePrice: parseUnits('3100', 12), trigger: parseUnits('2900', 12) });
    const deadline = Date.now() + 15_000;
    while (!(await getOrder(close.key)).flags.isFrozen) {
      if (Date.now() > deadline) throw new Error('the keeper did not freeze the order');
      await new Promise((r) => setTimeout(r, 100));
    }
    const frozen = gmxEvents(await emitterLogs(close.block)).find((e) => e.name === 'OrderFrozen' && e.topic1 === close.key);
    expect(frozen?.item('stringItems', 'reason')).toBe('OrderNotFulfillableAtAcceptablePrice');
    expect(await isPending(close.key)).toBe(true);

    // The account lowers the acceptable price (with a new fee): unfrozen, executed, the position closed.
    const receipt = await trader.wallet.writeContractSync({
      address: config.exchangeRouter,
      abi: exchangeRouterAbi,
      functionName: 'multicall',
      args: [[call('sendWnt', [config.orderVault, executionFee]), call('updateOrder', [close.key, usd('5000'), 0n, parseUnits('2900', 12), 0n, 0n, false])]],
      value: executionFee,
      gas: 2_000_000n,
    });
    expect(gmxEvents(receipt.logs).map((e) => e.name)).toEqual(['OrderUpdated']);
    await keeperTook(close.key);
    expect(gmxEvents(await emitterLogs(receipt.blockNumber)).some((e) => e.name === 'PositionDecrease' && e.item('bytes32Items', 'orderKey') === close.key)).toBe(true);
    expect(await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getAccountPositions', args: [config.dataStore, trader.address, 0n, 10n] })).toEqual([]);
    await setEthPrice('3000');
  });
});

describe('gmxV2 deployment on a fresh chain', () => {
  test("same addresses as the run's devnet; a reload sends nothing; a half-configured chain is finished", async () => {
    const accounts = devnetAccounts();
    const node = await startAnvil({ chainId: arbitrum.chainId, marker: `gmxV2-test-${process.pid}`, accounts: ANVIL_ACCOUNT_COUNT });
    try {
      const chain = devnetChain({ chainId: node.chainId, name: CHAIN, rpcUrl: node.rpcUrl });
      await deployChain({ chain, accounts, log: () => undefined });
      const ctx = { chain, name: CHAIN, deployer: accounts.protocolDeployer, funded: accounts.funded, tokens: arbitrum.tokens, log: () => undefined } as const;
      const first = await gmxV2.deploy(ctx);
      const plan = gmxDeployments({ tokens: arbitrum.tokens, owner: accounts.protocolDeployer.address });
      expect(first.deployed.slice(0, plan.all.length)).toEqual(plan.all.map((d) => d.label));
      // The run's devnet's config but for the price server's URL (its run replaces the placeholder).
      expect({ ...first.config, oracleUrl: config.oracleUrl }).toEqual(config);
      const reload = await gmxV2.deploy(ctx);
      expect(reload.deployed).toEqual([]);

      // A setting lost (as a chain stopped mid-configuration would have it): the reload sets exactly that one.
      const wallet = devnetWalletClient(chain, accounts.protocolDeployer.privateKey);
      await wallet.writeContractSync({ address: plan.dataStore.address, abi: devnetGmxAbis.dataStore, functionName: 'setUint', args: [keyOf('INCREASE_ORDER_GAS_LIMIT'), 0n] });
      expect((await gmxV2.deploy(ctx)).deployed).toEqual(['1 DataStore settings']);
    } finally {
      await node.stop();
    }
  });
});
