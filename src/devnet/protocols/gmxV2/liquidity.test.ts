/**
 * GM liquidity on the devnet's GMX v2 (deposits and withdrawals), on a devnet of this file's own, driven through
 * GMX's real ABIs from an EOA as GMX's UI sends them: the seed's GM and its price, deposits of USDC and WETH (GM
 * minted at the pool's value less the swap fee), a withdrawal paid pro rata, MinMarketTokens cancelling a deposit,
 * the account's own cancellations (refused early and to others), the simulations, the keeper executing deposits
 * and withdrawals after a restart, and a reload that deploys nothing. Its own devnet: it moves the chain's clock
 * (last: a restart after time travel would hand the keeper older block timestamps than the requests'), and executes
 * as the keeper itself (the devnet's keeper waits a long delay, but for the restart test).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  BaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  decodeEventLog,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  isAddressEqual,
  keccak256,
  maxUint256,
  parseEther,
  parseUnits,
  zeroAddress,
  type Address,
  type Hex,
  type Log,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { rmSync } from 'node:fs';
import { devnetClients, tempDir } from '../../../../test/support/env.ts';
import { newPayer } from '../../../../test/support/payer.ts';
import { startDevnet, type Devnet } from '../../devnet.ts';
import { testStablecoinAbi } from '../../contracts.ts';
import { customErrorsAbi, dataStoreAbi, eventEmitterAbi, exchangeRouterAbi, readerAbi } from '../../../protocols/gmxV2/abis.generated.ts';
import { requireGmxSdk } from '../../../../scripts/lib/gmxSdk.ts';
import { devnetAccounts } from '../../accounts.ts';
import { devnetChain, devnetWalletClient } from '../../clients.ts';
import { devnetGmxAbis, gmxDeployments } from './deployments.ts';
import { dsKeys, keyOf } from './keys.ts';
import { ETH_USD_MARKET, GLOBAL_PARAMS } from './market.ts';

const CHAIN = 'arbitrum';
const dataDir = tempDir('aw-gmx-liquidity-');
const lines: string[] = [];
let devnet: Devnet;
const start = async (gmxKeeperDelayMs: number) => {
  devnet = await startDevnet({ dataDir, log: (l) => lines.push(l), protocols: { gmxKeeperDelayMs } });
  return devnetClients(devnet.manifest, devnet.manifestPath);
};
let clients = await start(600_000);
afterAll(async () => {
  await devnet.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const arbitrum = clients.chain(CHAIN);
const client = clients.publicClient(CHAIN);
const config = arbitrum.protocols!.gmxV2!;
const plan = gmxDeployments({ tokens: arbitrum.tokens, owner: clients.manifest.accounts.protocolDeployer!.address });
const WETH = arbitrum.tokens.find((t) => t.symbol === 'WETH')!.address;
const USDC = arbitrum.tokens.find((t) => t.symbol === 'USDC')!.address;
const market = config.markets![0]!;
const marketProps = { marketToken: market, indexToken: WETH, longToken: WETH, shortToken: USDC };
const usdc = (amount: string): bigint => parseUnits(amount, 6);
const ETH_PRICE = parseUnits('3000', 12);
const USDC_PRICE = parseUnits('1', 24);
const prices = { indexTokenPrice: { min: ETH_PRICE, max: ETH_PRICE }, longTokenPrice: { min: ETH_PRICE, max: ETH_PRICE }, shortTokenPrice: { min: USDC_PRICE, max: USDC_PRICE } };
const simulatePrices = { primaryTokens: [WETH, USDC], primaryPrices: [{ min: ETH_PRICE, max: ETH_PRICE }, { min: USDC_PRICE, max: USDC_PRICE }], minTimestamp: 0n, maxTimestamp: 0n };
const FLOAT = 10n ** 30n;
const SWAP_FEE = ETH_USD_MARKET.params.swapFeeFactor;
const DEPOSIT_FEE = ETH_USD_MARKET.params.depositFeeFactor;
const WITHDRAWAL_FEE = ETH_USD_MARKET.params.withdrawalFeeFactor;
/** ISwapPricingUtils.SwapPricingType in GMX 2.1+: Swap 0, Shift 1, Atomic 2, Deposit 3, Withdrawal 4. */
const PRICING = { swap: 0, deposit: 3, withdrawal: 4 } as const;
const routerAbi = [...exchangeRouterAbi, ...customErrorsAbi] as const;
/** The devnet's own error for what it leaves out (not one of GMX's). */
const NOT_ON_THE_DEVNET = { type: 'error', name: 'NotOnTheDevnet', inputs: [{ type: 'string', name: 'what' }] } as const;
const rpc = <T>(method: string, params: unknown[] = []): Promise<T> => client.request({ method, params } as never) as Promise<T>;
const sdkKeys = requireGmxSdk<
  Record<string, Hex> & {
    swapFeeFactorKey(market: Address, forPositiveImpact: boolean): Hex;
    swapImpactFactorKey(market: Address, isPositive: boolean): Hex;
    swapImpactExponentFactorKey(market: Address): Hex;
    swapImpactPoolAmountKey(market: Address, token: Address): Hex;
  }
>('build/cjs/src/configs/dataStore.js');
const call = (functionName: string, args: unknown[]): Hex => encodeFunctionData({ abi: exchangeRouterAbi, functionName, args } as never);

async function revertOf(p: Promise<unknown>): Promise<{ name: string; args: readonly unknown[] }> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof BaseError)) throw new Error(`expected a revert, got ${String(error)}`);
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
  if (reverted?.data) return { name: reverted.data.errorName, args: reverted.data.args ?? [] };
  const raw = (error.walk((e) => typeof (e as { data?: unknown }).data === 'string') as { data?: Hex } | null)?.data;
  if (!raw) throw new Error(`no revert data in ${error.message}`);
  const decoded = decodeErrorResult({ abi: [...customErrorsAbi, NOT_ON_THE_DEVNET], data: raw });
  return { name: decoded.errorName, args: decoded.args ?? [] };
}

/** The EventEmitter's events in some logs: name, topics and items by kind and key. */
function gmxEvents(logs: readonly Log[]) {
  return logs
    .filter((l) => isAddressEqual(l.address, config.eventEmitter))
    .map((l) => {
      const args = decodeEventLog({ abi: eventEmitterAbi, data: l.data, topics: l.topics }).args as unknown as {
        eventName: string;
        topic1?: Hex;
        topic2?: Hex;
        eventData: Record<string, { items: readonly { key: string; value: unknown }[]; arrayItems: readonly { key: string; value: unknown }[] }>;
      };
      const item = (kind: string, key: string): unknown => args.eventData[kind]!.items.find((i) => i.key === key)?.value;
      const keys = (kind: string): string[] => args.eventData[kind]!.items.map((i) => i.key);
      return { name: args.eventName, topic1: args.topic1, topic2: args.topic2, item, keys };
    });
}

const getUint = (key: Hex) => client.readContract({ address: config.dataStore, abi: dataStoreAbi, functionName: 'getUint', args: [key] });
const poolKey = (token: Address) => dsKeys.marketToken('POOL_AMOUNT', market, token);
const balanceOf = (token: Address, account: Address) => client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [account] });
const gmSupply = () => client.readContract({ address: market, abi: erc20Abi, functionName: 'totalSupply' });
const listed = (list: Hex, key: Hex) => client.readContract({ address: config.dataStore, abi: dataStoreAbi, functionName: 'containsBytes32', args: [list, key] });

/** The pool's value as the README defines it (no positions here): tokens' USD − the impact pool's value. */
async function poolValue(): Promise<bigint> {
  const impact = await getUint(dsKeys.market('POSITION_IMPACT_POOL_AMOUNT', market));
  return (await getUint(poolKey(WETH))) * ETH_PRICE + (await getUint(poolKey(USDC))) * USDC_PRICE - impact * ETH_PRICE;
}

const impactPoolKey = (token: Address) => dsKeys.marketToken('SWAP_IMPACT_POOL_AMOUNT', market, token);
const IMPACT = ETH_USD_MARKET.params.swapImpactFactor;

/**
 * GMX's swap price impact (USD, 30 decimals) of the pool's long and short USD growing by `usdIn`, with the devnet's
 * exponent 2: factor × (imbalance before² − imbalance after²) on one side; across sides, the positive factor on
 * the imbalance before minus the negative one on the imbalance after.
 */
function swapImpactUsd(pool: [bigint, bigint], usdIn: [bigint, bigint]): bigint {
  const sq = (x: bigint) => (x * x) / FLOAT;
  const abs = (x: bigint) => (x < 0n ? -x : x);
  const next: [bigint, bigint] = [pool[0] + usdIn[0], pool[1] + usdIn[1]];
  const before = abs(pool[0] - pool[1]);
  const after = abs(next[0] - next[1]);
  if (pool[0] <= pool[1] === next[0] <= next[1]) {
    const positive = after < before;
    const delta = (abs(sq(before) - sq(after)) * (positive ? IMPACT.positive : IMPACT.negative)) / FLOAT;
    return positive ? delta : -delta;
  }
  return (sq(before) * IMPACT.positive) / FLOAT - (sq(after) * IMPACT.negative) / FLOAT;
}

/** Executes a pending request as the keeper account would (the devnet's keeper waits here), at the feeds' prices. */
async function executeAsKeeper(kind: 'Deposit' | 'Withdrawal', key: Hex) {
  const keeper = devnetWalletClient(devnetChain(arbitrum), devnetAccounts().gmxKeeper.privateKey);
  const block = await client.getBlock();
  const encode = (price: bigint) => encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }], [price, price, block.timestamp]);
  const params = { tokens: [WETH, USDC], providers: plan.feeds.map((f) => f.deployment.address), data: [encode(ETH_PRICE), encode(USDC_PRICE)] };
  const handler = kind === 'Deposit' ? { address: plan.depositHandler.address, abi: devnetGmxAbis.depositHandler } : { address: plan.withdrawalHandler.address, abi: devnetGmxAbis.withdrawalHandler };
  const receipt = await keeper.writeContractSync({ ...handler, functionName: `execute${kind}`, args: [key, params], gas: 6_000_000n });
  expect(receipt.status).toBe('success');
  return gmxEvents(receipt.logs);
}

describe('GM liquidity on the devnet (through the real GMX v2 ABIs)', () => {
  let trader: Awaited<ReturnType<typeof newPayer>>;
  let executionFee: bigint;

  const depositParams = (p: { minMarketTokens?: bigint; receiver?: Address; fee?: bigint }) => ({
    addresses: {
      receiver: p.receiver ?? trader.address,
      callbackContract: zeroAddress,
      uiFeeReceiver: zeroAddress,
      market,
      initialLongToken: WETH,
      initialShortToken: USDC,
      longTokenSwapPath: [] as Address[],
      shortTokenSwapPath: [] as Address[],
    },
    minMarketTokens: p.minMarketTokens ?? 0n,
    shouldUnwrapNativeToken: false,
    executionFee: p.fee ?? executionFee,
    callbackGasLimit: 0n,
    dataList: [] as Hex[],
  });
  /** sendWnt(fee [+ WETH in]) + sendTokens(USDC) + createDeposit. */
  const depositCalls = (p: { usdc?: bigint; weth?: bigint; minMarketTokens?: bigint; fee?: bigint }): Hex[] => [
    call('sendWnt', [config.depositVault, (p.fee ?? executionFee) + (p.weth ?? 0n)]),
    ...(p.usdc ? [call('sendTokens', [USDC, config.depositVault, p.usdc])] : []),
    call('createDeposit', [depositParams(p)]),
  ];
  const withdrawalParams = (p: { receiver?: Address; minLong?: bigint; minShort?: bigint; unwrap?: boolean }) => ({
    addresses: { receiver: p.receiver ?? trader.address, callbackContract: zeroAddress, uiFeeReceiver: zeroAddress, market, longTokenSwapPath: [] as Address[], shortTokenSwapPath: [] as Address[] },
    minLongTokenAmount: p.minLong ?? 0n,
    minShortTokenAmount: p.minShort ?? 0n,
    shouldUnwrapNativeToken: p.unwrap ?? false,
    executionFee,
    callbackGasLimit: 0n,
    dataList: [] as Hex[],
  });
  const withdrawalCalls = (gm: bigint, p: Parameters<typeof withdrawalParams>[0] = {}): Hex[] => [
    call('sendWnt', [config.withdrawalVault, executionFee]),
    call('sendTokens', [market, config.withdrawalVault, gm]),
    call('createWithdrawal', [withdrawalParams(p)]),
  ];
  /** Sends a multicall; the request's key is the Created event's topic1. */
  const send = async (calls: Hex[], value: bigint, created: 'DepositCreated' | 'WithdrawalCreated') => {
    const receipt = await trader.wallet.writeContractSync({ address: config.exchangeRouter, abi: exchangeRouterAbi, functionName: 'multicall', args: [calls], value, gas: 3_000_000n });
    expect(receipt.status).toBe('success');
    const event = gmxEvents(receipt.logs).find((e) => e.name === created)!;
    expect(event.topic2).toBe(`0x${trader.address.slice(2).toLowerCase().padStart(64, '0')}`);
    return { key: event.topic1!, event };
  };

  beforeAll(async () => {
    trader = await newPayer(clients, CHAIN);
    await rpc('anvil_setBalance', [trader.address, `0x${parseEther('100').toString(16)}`]);
    await trader.mint('USDC', trader.address, usdc('100000'));
    await trader.wallet.writeContractSync({ address: USDC, abi: testStablecoinAbi, functionName: 'approve', args: [config.router, maxUint256] });
    await trader.wallet.writeContractSync({ address: market, abi: erc20Abi, functionName: 'approve', args: [config.router, maxUint256] });
    const gasLimit = GLOBAL_PARAMS.ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1 + 3n * GLOBAL_PARAMS.ESTIMATED_GAS_FEE_PER_ORACLE_PRICE + GLOBAL_PARAMS.DEPOSIT_GAS_LIMIT;
    executionFee = gasLimit * (await client.getGasPrice()) * 2n;
  });

  test("the seed's GM: 600,000 to the protocol deployer at $1 per seed USD; the Reader prices GM at the pool's value per GM", async () => {
    const deployer = clients.manifest.accounts.protocolDeployer!.address;
    expect(await gmSupply()).toBe(parseUnits('600000', 18));
    expect(await balanceOf(market, deployer)).toBe(parseUnits('600000', 18));
    const [price, info] = await client.readContract({
      address: config.reader,
      abi: readerAbi,
      functionName: 'getMarketTokenPrice',
      args: [config.dataStore, marketProps, prices.indexTokenPrice, prices.longTokenPrice, prices.shortTokenPrice, keyOf('MAX_PNL_FACTOR_FOR_DEPOSITS'), true],
    });
    // 100 WETH × $3000 + 300,000 USDC − the 1 WETH impact pool = $597,000 over 600,000 GM.
    expect(info.poolValue).toBe(parseUnits('597000', 30));
    expect(info).toMatchObject({ longTokenAmount: parseEther('100'), shortTokenAmount: usdc('300000'), impactPoolAmount: parseEther('1'), netPnl: 0n });
    expect(price).toBe(parseUnits('0.995', 30));
    expect(config).toMatchObject({ depositVault: plan.depositVault.address, withdrawalVault: plan.withdrawalVault.address });
    expect(await client.readContract({ address: config.exchangeRouter, abi: exchangeRouterAbi, functionName: 'depositHandler' })).toBe(plan.depositHandler.address);
    expect(await client.readContract({ address: config.exchangeRouter, abi: exchangeRouterAbi, functionName: 'withdrawalHandler' })).toBe(plan.withdrawalHandler.address);
    // The swap fee (deposits' and withdrawals' fee) under the SDK's key, both sides set.
    expect(dsKeys.marketFlag('SWAP_FEE_FACTOR', market, true)).toBe(sdkKeys.swapFeeFactorKey(market, true));
    expect(await getUint(sdkKeys.swapFeeFactorKey(market, true))).toBe(SWAP_FEE.positive);
    expect(await getUint(sdkKeys.swapFeeFactorKey(market, false))).toBe(SWAP_FEE.negative);
    // Not in the SDK 1.4.0: Keys.sol's depositFeeFactorKey / withdrawalFeeFactorKey, hashed here as GMX does.
    const feeKey = (name: string, improved: boolean) =>
      keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'address' }, { type: 'bool' }], [keccak256(encodeAbiParameters([{ type: 'string' }], [name])), market, improved]));
    expect(await getUint(feeKey('DEPOSIT_FEE_FACTOR', true))).toBe(DEPOSIT_FEE.positive);
    expect(await getUint(feeKey('DEPOSIT_FEE_FACTOR', false))).toBe(DEPOSIT_FEE.negative);
    expect(await getUint(feeKey('WITHDRAWAL_FEE_FACTOR', true))).toBe(WITHDRAWAL_FEE.positive);
    expect(await getUint(feeKey('WITHDRAWAL_FEE_FACTOR', false))).toBe(WITHDRAWAL_FEE.negative);
    expect(await getUint(sdkKeys.swapImpactFactorKey(market, true))).toBe(IMPACT.positive);
    expect(await getUint(sdkKeys.swapImpactFactorKey(market, false))).toBe(IMPACT.negative);
    expect(await getUint(sdkKeys.swapImpactExponentFactorKey(market))).toBe(ETH_USD_MARKET.params.swapImpactExponentFactor);
    expect(impactPoolKey(USDC)).toBe(sdkKeys.swapImpactPoolAmountKey(market, USDC));
    expect(await getUint(sdkKeys.DEPOSIT_GAS_LIMIT_KEY!)).toBe(GLOBAL_PARAMS.DEPOSIT_GAS_LIMIT);
    expect(await getUint(sdkKeys.WITHDRAWAL_GAS_LIMIT_KEY!)).toBe(GLOBAL_PARAMS.WITHDRAWAL_GAS_LIMIT);
  });

  test('a USDC deposit: simulated (EndOfOracleSimulation), created, executed: GM at the pool value, the 0.07% fee kept by the pool', async () => {
    const amount = usdc('3000');
    const simulated = await revertOf(
      client.simulateContract({
        account: trader.address,
        address: config.exchangeRouter,
        abi: routerAbi,
        functionName: 'multicall',
        args: [[...depositCalls({ usdc: amount }), call('simulateExecuteLatestDeposit', [simulatePrices])]],
        value: executionFee,
      }),
    );
    expect(simulated.name).toBe('EndOfOracleSimulation');

    const [supply, value, usdcPool, wethPool] = [await gmSupply(), await poolValue(), await getUint(poolKey(USDC)), await getUint(poolKey(WETH))];
    // USDC into a balanced pool worsens its balance: the negative-side fee, and a negative impact (rounded up) that
    // goes to the USDC swap impact pool.
    expect(wethPool * ETH_PRICE).toBe(usdcPool * USDC_PRICE);
    const fee = (amount * DEPOSIT_FEE.negative) / FLOAT;
    const impact = swapImpactUsd([wethPool * ETH_PRICE, usdcPool * USDC_PRICE], [0n, amount * USDC_PRICE]);
    expect(impact).toBe(-parseUnits('0.009', 30)); // 10^-9 × $3000²
    const cost = (-impact + USDC_PRICE - 1n) / USDC_PRICE;
    const expected = ((amount - fee - cost) * USDC_PRICE * supply) / value;
    const quote = (pricing: number) =>
      client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getDepositAmountOut', args: [config.dataStore, marketProps, prices, 0n, amount, zeroAddress, pricing, true] });
    expect(await quote(PRICING.deposit)).toBe(expected);
    // Asked as a swap, the quote takes the swap fee: a client that asks with the wrong type is told a wrong amount.
    expect(await quote(PRICING.swap)).toBe(((amount - (amount * SWAP_FEE.negative) / FLOAT - cost) * USDC_PRICE * supply) / value);

    const { key, event } = await send(depositCalls({ usdc: amount }), executionFee, 'DepositCreated');
    expect(event.item('uintItems', 'initialShortTokenAmount')).toBe(amount);
    expect(event.item('uintItems', 'initialLongTokenAmount')).toBe(0n);
    expect(event.item('uintItems', 'executionFee')).toBe(executionFee);
    expect(event.keys('addressItems')).toEqual(expect.arrayContaining(['account', 'receiver', 'callbackContract', 'market', 'initialLongToken', 'initialShortToken']));
    expect(event.keys('uintItems')).toEqual(expect.arrayContaining(['minMarketTokens', 'updatedAtTime', 'callbackGasLimit']));
    const deposit = await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getDeposit', args: [config.dataStore, key] });
    expect(deposit.addresses).toMatchObject({ account: trader.address, receiver: trader.address, market, initialLongToken: WETH, initialShortToken: USDC });
    expect(deposit.numbers).toMatchObject({ initialShortTokenAmount: amount, executionFee });
    expect(await listed(dsKeys.depositList, key)).toBe(true);
    expect(await listed(keccakAccountList('ACCOUNT_DEPOSIT_LIST', trader.address), key)).toBe(true);

    const events = await executeAsKeeper('Deposit', key);
    const executed = events.find((e) => e.name === 'DepositExecuted')!;
    expect(executed.topic1).toBe(key);
    expect(executed.item('uintItems', 'receivedMarketTokens')).toBe(expected);
    expect(executed.item('uintItems', 'shortTokenAmount')).toBe(amount);
    expect(await balanceOf(market, trader.address)).toBe(expected);
    expect(await getUint(poolKey(USDC))).toBe(usdcPool + amount - cost);
    expect(await getUint(impactPoolKey(USDC))).toBe(cost);
    expect(await balanceOf(USDC, market)).toBe(usdcPool + amount);
    expect(await listed(dsKeys.depositList, key)).toBe(false);
    expect((await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getDeposit', args: [config.dataStore, key] })).addresses.account).toBe(zeroAddress);
  });

  test('a WETH deposit (sendWnt carries the fee and the WETH) improves the balance: the 0.05% fee, and a positive impact paid from the USDC swap impact pool', async () => {
    const weth = parseEther('1');
    const [supply, value, before] = [await gmSupply(), await poolValue(), await balanceOf(market, trader.address)];
    const [wethPool, usdcPool, usdcImpactPool] = [await getUint(poolKey(WETH)), await getUint(poolKey(USDC)), await getUint(impactPoolKey(USDC))];
    const fee = (weth * DEPOSIT_FEE.positive) / FLOAT;
    const impact = swapImpactUsd([wethPool * ETH_PRICE, usdcPool * USDC_PRICE], [weth * ETH_PRICE, 0n]);
    expect(impact).toBeGreaterThan(0n);
    // Paid in USDC out of its swap impact pool, at most what that holds.
    const bonus = impact / USDC_PRICE < usdcImpactPool ? impact / USDC_PRICE : usdcImpactPool;
    expect(bonus).toBeGreaterThan(0n);
    const expected = ((weth - fee) * ETH_PRICE * supply) / value + (bonus * USDC_PRICE * supply) / value;
    const { key } = await send(depositCalls({ weth }), executionFee + weth, 'DepositCreated');
    const deposit = await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getDeposit', args: [config.dataStore, key] });
    expect(deposit.numbers).toMatchObject({ initialLongTokenAmount: weth, initialShortTokenAmount: 0n, executionFee });
    const executed = (await executeAsKeeper('Deposit', key)).find((e) => e.name === 'DepositExecuted')!;
    expect(executed.item('uintItems', 'receivedMarketTokens')).toBe(expected);
    expect(await balanceOf(market, trader.address)).toBe(before + expected);
    expect(await balanceOf(WETH, config.depositVault)).toBe(0n);
    expect(await getUint(poolKey(WETH))).toBe(wethPool + weth);
    expect(await getUint(poolKey(USDC))).toBe(usdcPool + bonus);
    expect(await getUint(impactPoolKey(USDC))).toBe(usdcImpactPool - bonus);
  });

  test('a withdrawal: GM burnt, WETH (unwrapped) and USDC out pro rata to the pool, less the fee; simulated first', async () => {
    const gm = (await balanceOf(market, trader.address)) / 2n;
    const receiver = privateKeyToAccount(generatePrivateKey()).address;
    const simulated = await revertOf(
      client.simulateContract({
        account: trader.address,
        address: config.exchangeRouter,
        abi: routerAbi,
        functionName: 'multicall',
        args: [[...withdrawalCalls(gm, { receiver, unwrap: true }), call('simulateExecuteLatestWithdrawal', [simulatePrices, PRICING.withdrawal])]],
        value: executionFee,
      }),
    );
    expect(simulated.name).toBe('EndOfOracleSimulation');

    const [supply, value, wethPool, usdcPool] = [await gmSupply(), await poolValue(), await getUint(poolKey(WETH)), await getUint(poolKey(USDC))];
    const usd = (gm * value) / supply;
    const total = wethPool * ETH_PRICE + usdcPool * USDC_PRICE;
    const longGross = (usd * wethPool * ETH_PRICE) / total / ETH_PRICE;
    const shortGross = (usd * usdcPool * USDC_PRICE) / total / USDC_PRICE;
    const longOut = longGross - (longGross * WITHDRAWAL_FEE.negative) / FLOAT;
    const shortOut = shortGross - (shortGross * WITHDRAWAL_FEE.negative) / FLOAT;
    expect(await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getWithdrawalAmountOut', args: [config.dataStore, marketProps, prices, gm, zeroAddress, PRICING.withdrawal] })).toEqual([longOut, shortOut]);

    const { key, event } = await send(withdrawalCalls(gm, { receiver, unwrap: true }), executionFee, 'WithdrawalCreated');
    expect(event.item('uintItems', 'marketTokenAmount')).toBe(gm);
    const withdrawal = await client.readContract({ address: config.reader, abi: readerAbi, functionName: 'getWithdrawal', args: [config.dataStore, key] });
    expect(withdrawal.numbers).toMatchObject({ marketTokenAmount: gm, executionFee });
    expect(withdrawal.flags.shouldUnwrapNativeToken).toBe(true);

    const events = await executeAsKeeper('Withdrawal', key);
    expect(events.find((e) => e.name === 'WithdrawalExecuted')?.topic1).toBe(key);
    expect(await gmSupply()).toBe(supply - gm);
    expect(await balanceOf(USDC, receiver)).toBe(shortOut);
    expect(await balanceOf(WETH, receiver)).toBe(0n);
    // The receiver gets the WETH as ETH, and the execution fee's rest.
    expect(await client.getBalance({ address: receiver })).toBeGreaterThanOrEqual(longOut);
    expect(await client.getBalance({ address: receiver })).toBeLessThanOrEqual(longOut + executionFee);
    expect(await getUint(poolKey(WETH))).toBe(wethPool - longOut);
    expect(await getUint(poolKey(USDC))).toBe(usdcPool - shortOut);
  });

  test('MinMarketTokens: the keeper cancels the deposit (DepositCancelled with the reason and its bytes), the USDC goes back', async () => {
    const before = await balanceOf(USDC, trader.address);
    const { key } = await send(depositCalls({ usdc: usdc('100'), minMarketTokens: parseUnits('1000000', 18) }), executionFee, 'DepositCreated');
    expect(await balanceOf(USDC, trader.address)).toBe(before - usdc('100'));
    const cancelled = (await executeAsKeeper('Deposit', key)).find((e) => e.name === 'DepositCancelled')!;
    expect(cancelled.topic1).toBe(key);
    expect(cancelled.item('stringItems', 'reason')).toBe('MinMarketTokens');
    const reason = decodeErrorResult({ abi: customErrorsAbi, data: cancelled.item('bytesItems', 'reasonBytes') as Hex });
    expect(reason.errorName).toBe('MinMarketTokens');
    expect(reason.args![1]).toBe(parseUnits('1000000', 18));
    expect(await balanceOf(USDC, trader.address)).toBe(before);
    expect(await listed(dsKeys.depositList, key)).toBe(false);
  });

  test('createDeposit and createWithdrawal refuse swap paths, empty amounts and a low fee with GMX errors; other selectors NotOnTheDevnet', async () => {
    const simulate = (calls: Hex[], value: bigint) =>
      revertOf(client.simulateContract({ account: trader.address, address: config.exchangeRouter, abi: routerAbi, functionName: 'multicall', args: [calls], value }));
    expect((await simulate([call('sendWnt', [config.depositVault, executionFee]), call('createDeposit', [depositParams({})])], executionFee)).name).toBe('EmptyDepositAmounts');
    const withSwap = { ...depositParams({}), addresses: { ...depositParams({}).addresses, longTokenSwapPath: [market] } };
    expect((await simulate([call('sendWnt', [config.depositVault, executionFee]), call('createDeposit', [withSwap])], executionFee)).name).toBe('MaxSwapPathLengthExceeded');
    const gasPrice = parseUnits('1', 9);
    const low = await revertOf(
      client.simulateContract({ account: trader.address, address: config.exchangeRouter, abi: routerAbi, functionName: 'multicall', args: [depositCalls({ usdc: usdc('10'), fee: 1n })], value: 1n, gasPrice }),
    );
    const minFee = (GLOBAL_PARAMS.ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1 + 3n * GLOBAL_PARAMS.ESTIMATED_GAS_FEE_PER_ORACLE_PRICE + GLOBAL_PARAMS.DEPOSIT_GAS_LIMIT) * gasPrice;
    expect(low).toEqual({ name: 'InsufficientExecutionFee', args: [minFee, 1n] });
    expect((await simulate([call('sendWnt', [config.withdrawalVault, executionFee]), call('createWithdrawal', [withdrawalParams({})])], executionFee)).name).toBe('EmptyWithdrawalAmount');
    const other = await revertOf(client.call({ account: trader.address, to: config.exchangeRouter, data: '0x12345678' }));
    expect(other).toEqual({ name: 'NotOnTheDevnet', args: ["shifts, GLV and the rest of GMX's ExchangeRouter"] });
  });

  test('the keeper executes a pending deposit and withdrawal after a restart, once; the reload deploys nothing', { timeout: 60_000 }, async () => {
    const { key: deposit } = await send(depositCalls({ usdc: usdc('1000') }), executionFee, 'DepositCreated');
    const { key: withdrawal } = await send(withdrawalCalls(parseUnits('10', 18)), executionFee, 'WithdrawalCreated');
    const gmBefore = await balanceOf(market, trader.address);
    await devnet.stop();
    const mark = lines.length;
    clients = await start(0);
    const after = clients.publicClient(CHAIN);
    const count = (list: Hex) => after.readContract({ address: config.dataStore, abi: dataStoreAbi, functionName: 'getBytes32Count', args: [list] });
    const deadline = Date.now() + 20_000;
    while ((await count(dsKeys.depositList)) + (await count(dsKeys.withdrawalList)) > 0n) {
      if (Date.now() > deadline) throw new Error(`the keeper did not execute the pending deposit and withdrawal: ${lines.slice(mark).join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const since = lines.slice(mark);
    expect(since.filter((l) => l.includes(deposit) && l.includes('executed'))).toHaveLength(1);
    expect(since.filter((l) => l.includes(withdrawal) && l.includes('executed'))).toHaveLength(1);
    expect(await after.readContract({ address: market, abi: erc20Abi, functionName: 'balanceOf', args: [trader.address] })).toBeGreaterThan(gmBefore - parseUnits('10', 18));
    // A reload sends nothing: no deployment line for gmxV2.
    expect(since.filter((l) => l.includes(`gmxV2 ${ETH_USD_MARKET.name} at`))).toEqual([]);
    // The next test cancels requests itself: the keeper waits again (the same ports: the clients above still work).
    await devnet.stop();
    clients = await start(600_000);
  });

  test("cancelDeposit/cancelWithdrawal: not another account's, not before REQUEST_EXPIRATION_TIME; after it everything back; unknown keys", async () => {
    const { key: deposit } = await send(depositCalls({ usdc: usdc('500') }), executionFee, 'DepositCreated');
    const gm = parseUnits('100', 18);
    const { key: withdrawal } = await send(withdrawalCalls(gm), executionFee, 'WithdrawalCreated');
    const other = await newPayer(clients, CHAIN);
    const cancel = (functionName: 'cancelDeposit' | 'cancelWithdrawal', key: Hex, account: Address = trader.address) =>
      revertOf(client.simulateContract({ account, address: config.exchangeRouter, abi: routerAbi, functionName, args: [key] }));
    expect((await cancel('cancelDeposit', deposit, other.address)).name).toBe('Unauthorized');
    expect((await cancel('cancelWithdrawal', withdrawal, other.address)).name).toBe('Unauthorized');
    const early = await cancel('cancelDeposit', deposit);
    expect(early.name).toBe('RequestNotYetCancellable');
    expect(early.args[2]).toBe('Deposit');
    expect((await cancel('cancelWithdrawal', withdrawal)).args[2]).toBe('Withdrawal');
    expect((await cancel('cancelDeposit', withdrawal)).name).toBe('EmptyDeposit');
    expect((await cancel('cancelWithdrawal', deposit)).name).toBe('EmptyWithdrawal');

    await rpc('evm_increaseTime', [Number(GLOBAL_PARAMS.REQUEST_EXPIRATION_TIME) + 1]);
    await rpc('evm_mine');
    const [usdcBefore, gmBefore] = [await balanceOf(USDC, trader.address), await balanceOf(market, trader.address)];
    const reasons: unknown[] = [];
    for (const [functionName, key] of [['cancelDeposit', deposit], ['cancelWithdrawal', withdrawal]] as const) {
      const ethBefore = await client.getBalance({ address: trader.address });
      const receipt = await trader.wallet.writeContractSync({ address: config.exchangeRouter, abi: exchangeRouterAbi, functionName, args: [key], gas: 2_000_000n });
      expect(receipt.status).toBe('success');
      // The whole execution fee back, less this transaction's gas.
      expect(await client.getBalance({ address: trader.address })).toBe(ethBefore + executionFee - receipt.gasUsed * receipt.effectiveGasPrice);
      const ended = gmxEvents(receipt.logs).find((e) => e.name.endsWith('Cancelled'))!;
      reasons.push([ended.name, ended.item('stringItems', 'reason')]);
    }
    expect(reasons).toEqual([
      ['DepositCancelled', 'USER_INITIATED_CANCEL'],
      ['WithdrawalCancelled', 'USER_INITIATED_CANCEL'],
    ]);
    expect(await balanceOf(USDC, trader.address)).toBe(usdcBefore + usdc('500'));
    expect(await balanceOf(market, trader.address)).toBe(gmBefore + gm);
  });

});

/** ACCOUNT_DEPOSIT_LIST / ACCOUNT_WITHDRAWAL_LIST of an account (Keys.accountDepositListKey). */
function keccakAccountList(name: string, account: Address): Hex {
  return dsKeys.account(name, account);
}
