import { concat, encodeFunctionData, formatEther, parseEther, type Address, type Hex } from 'viem';
import { devnetPublicClient, devnetWalletClient } from '../../clients.ts';
import { CREATE2_DEPLOYER, testStablecoinAbi, testWethAbi } from '../../contracts.ts';
import { devnetAccounts } from '../../accounts.ts';
import type { ProtocolDeployContext, ProtocolDeployResult } from '../types.ts';
import { devnetGmxAbis, gmxDeployments, NO_REFERRAL_STORAGE, type GmxDeployments } from './deployments.ts';
import { dsKeys, keyOf, ROLES } from './keys.ts';
import { ETH_USD_MARKET, FEED_DECIMALS, GLOBAL_PARAMS } from './market.ts';
import { verifyGmx } from './verify.ts';

/** Until the devnet's price server runs (run.ts), the config's oracleUrl is this; startDevnet replaces it. */
export const GMX_ORACLE_URL_PENDING = 'http://127.0.0.1:9/gmx-price-server-not-started';
/** Our own DataStore flag (not a GMX key): the pools were seeded once, so trades moving them is not "missing". */
const SEEDED_KEY = keyOf('AGENT_WALLET_DEVNET_SEEDED');
/** Ours too: the seed's GM was minted once (a devnet seeded before GM existed gets it on its next deploy). */
const GM_SEEDED_KEY = keyOf('AGENT_WALLET_DEVNET_GM_SEEDED');
/** The keeper's native coin for gas: topped up to this when it falls below half. */
const KEEPER_FUNDING = parseEther('10');

/** The DataStore's uint config: GMX's global keys and the market's (name for the log, key, value). */
export function gmxUintConfig(plan: GmxDeployments): { name: string; key: Hex; value: bigint }[] {
  const market = plan.market.marketToken;
  const p = ETH_USD_MARKET.params;
  const out: { name: string; key: Hex; value: bigint }[] = Object.entries(GLOBAL_PARAMS).map(([name, value]) => ({ name, key: keyOf(name), value }));
  const both = (name: string, positive: bigint, negative: bigint) => {
    out.push({ name: `${name}(true)`, key: dsKeys.marketFlag(name, market, true), value: positive });
    out.push({ name: `${name}(false)`, key: dsKeys.marketFlag(name, market, false), value: negative });
  };
  both('POSITION_FEE_FACTOR', p.positionFeeFactor.positive, p.positionFeeFactor.negative);
  both('POSITION_IMPACT_FACTOR', p.positionImpactFactor.positive, p.positionImpactFactor.negative);
  both('POSITION_IMPACT_EXPONENT_FACTOR', p.positionImpactExponentFactor, p.positionImpactExponentFactor);
  both('MAX_POSITION_IMPACT_FACTOR', p.maxPositionImpactFactor, p.maxPositionImpactFactor);
  both('MIN_COLLATERAL_FACTOR_FOR_OPEN_INTEREST_MULTIPLIER', p.minCollateralFactorForOpenInterestMultiplier, p.minCollateralFactorForOpenInterestMultiplier);
  both('RESERVE_FACTOR', p.reserveFactor, p.reserveFactor);
  both('OPEN_INTEREST_RESERVE_FACTOR', p.openInterestReserveFactor, p.openInterestReserveFactor);
  both('MAX_OPEN_INTEREST', p.maxOpenInterest, p.maxOpenInterest);
  both('BORROWING_FACTOR', p.borrowingFactor, p.borrowingFactor);
  both('BORROWING_EXPONENT_FACTOR', p.borrowingExponentFactor, p.borrowingExponentFactor);
  both('SWAP_FEE_FACTOR', p.swapFeeFactor.positive, p.swapFeeFactor.negative);
  both('DEPOSIT_FEE_FACTOR', p.depositFeeFactor.positive, p.depositFeeFactor.negative);
  both('WITHDRAWAL_FEE_FACTOR', p.withdrawalFeeFactor.positive, p.withdrawalFeeFactor.negative);
  both('SWAP_IMPACT_FACTOR', p.swapImpactFactor.positive, p.swapImpactFactor.negative);
  out.push({ name: 'MIN_COLLATERAL_FACTOR', key: dsKeys.market('MIN_COLLATERAL_FACTOR', market), value: p.minCollateralFactor });
  // Read by the SDK's liquidation price; the devnet does not liquidate (README), so it mirrors MIN_COLLATERAL_FACTOR.
  out.push({ name: 'MIN_COLLATERAL_FACTOR_FOR_LIQUIDATION', key: dsKeys.market('MIN_COLLATERAL_FACTOR_FOR_LIQUIDATION', market), value: p.minCollateralFactor });
  out.push({ name: 'SWAP_IMPACT_EXPONENT_FACTOR', key: dsKeys.market('SWAP_IMPACT_EXPONENT_FACTOR', market), value: p.swapImpactExponentFactor });
  out.push({ name: 'FUNDING_FACTOR', key: dsKeys.market('FUNDING_FACTOR', market), value: p.fundingFactor });
  out.push({ name: 'FUNDING_EXPONENT_FACTOR', key: dsKeys.market('FUNDING_EXPONENT_FACTOR', market), value: p.fundingExponentFactor });
  out.push({ name: 'MAX_POOL_AMOUNT(long)', key: dsKeys.marketToken('MAX_POOL_AMOUNT', market, plan.market.longToken), value: p.maxPoolAmount.long });
  out.push({ name: 'MAX_POOL_AMOUNT(short)', key: dsKeys.marketToken('MAX_POOL_AMOUNT', market, plan.market.shortToken), value: p.maxPoolAmount.short });
  return out;
}

/** The DataStore's address config: WNT, the market's fields (MarketStoreUtils) and each token's oracle provider. */
export function gmxAddressConfig(plan: GmxDeployments): { name: string; key: Hex; value: Address }[] {
  const m = plan.market;
  return [
    { name: 'WNT', key: keyOf('WNT'), value: plan.wnt },
    { name: 'MARKET_TOKEN', key: dsKeys.marketField(m.marketToken, 'MARKET_TOKEN'), value: m.marketToken },
    { name: 'INDEX_TOKEN', key: dsKeys.marketField(m.marketToken, 'INDEX_TOKEN'), value: m.indexToken },
    { name: 'LONG_TOKEN', key: dsKeys.marketField(m.marketToken, 'LONG_TOKEN'), value: m.longToken },
    { name: 'SHORT_TOKEN', key: dsKeys.marketField(m.marketToken, 'SHORT_TOKEN'), value: m.shortToken },
    ...plan.feeds.map((f) => ({ name: `ORACLE_PROVIDER_FOR_TOKEN(${f.symbol})`, key: dsKeys.oracleProvider(f.token), value: f.deployment.address })),
  ];
}

/** Roles as GMX wires them: the handlers and the ExchangeRouter are CONTROLLERs, the keeper an ORDER_KEEPER. */
export function gmxRoles(plan: GmxDeployments, owner: Address, keeper: Address): { account: Address; role: Hex; label: string }[] {
  return [
    { account: owner, role: ROLES.CONTROLLER, label: 'protocol deployer CONTROLLER (writes the config)' },
    { account: plan.exchangeRouter.address, role: ROLES.CONTROLLER, label: 'ExchangeRouter CONTROLLER' },
    { account: plan.exchangeRouter.address, role: ROLES.ROUTER_PLUGIN, label: 'ExchangeRouter ROUTER_PLUGIN' },
    { account: plan.orderHandler.address, role: ROLES.CONTROLLER, label: 'OrderHandler CONTROLLER' },
    { account: plan.positionHandler.address, role: ROLES.CONTROLLER, label: 'PositionHandler CONTROLLER' },
    { account: plan.depositHandler.address, role: ROLES.CONTROLLER, label: 'DepositHandler CONTROLLER' },
    { account: plan.withdrawalHandler.address, role: ROLES.CONTROLLER, label: 'WithdrawalHandler CONTROLLER' },
    { account: keeper, role: ROLES.ORDER_KEEPER, label: 'keeper ORDER_KEEPER' },
  ];
}

/**
 * Brings a chain to the devnet's GMX v2, doing only what is missing: the contracts (CREATE2), the roles, the
 * DataStore's config and market, the pools' one-time seed, the keeper's gas money. A reload sends nothing.
 */
export async function deployGmxV2(ctx: ProtocolDeployContext): Promise<ProtocolDeployResult<'gmxV2'>> {
  const client = devnetPublicClient(ctx.chain);
  const wallet = devnetWalletClient(ctx.chain, ctx.deployer.privateKey);
  const plan = gmxDeployments({ tokens: ctx.tokens, owner: ctx.deployer.address });
  const keeper = devnetAccounts().gmxKeeper.address;
  const where = `${ctx.name}: gmxV2`;
  const deployed: string[] = [];
  const send = async (what: string, to: Address, data: Hex, value?: bigint): Promise<void> => {
    const receipt = await wallet.sendTransactionSync({ to, data, value });
    if (receipt.status !== 'success') throw new Error(`${where}: ${what} reverted (tx ${receipt.transactionHash})`);
  };
  const dataStore = plan.dataStore.address;
  const ds = (functionName: string, args: unknown[]): Hex => encodeFunctionData({ abi: devnetGmxAbis.dataStore, functionName, args });
  const readDs = <T>(functionName: string, args: unknown[]): Promise<T> =>
    client.readContract({ address: dataStore, abi: devnetGmxAbis.dataStore, functionName, args }) as Promise<T>;

  const codes = await Promise.all([CREATE2_DEPLOYER, ...plan.all.map((d) => d.address)].map((address) => client.getCode({ address })));
  if ((codes[0] ?? '0x') === '0x') throw new Error(`${where}: no CREATE2 deployer at ${CREATE2_DEPLOYER}`);
  for (const [i, d] of plan.all.entries()) {
    if ((codes[i + 1] ?? '0x') !== '0x') continue;
    await send(`deploying ${d.label}`, CREATE2_DEPLOYER, concat([d.salt, d.initCode]));
    if ((await client.getCode({ address: d.address })) === undefined) throw new Error(`${where}: ${d.label} has no code at ${d.address} after deployment`);
    deployed.push(d.label);
  }

  const roles = gmxRoles(plan, ctx.deployer.address, keeper);
  const has = await Promise.all(
    roles.map((r) => client.readContract({ address: plan.roleStore.address, abi: devnetGmxAbis.roleStore, functionName: 'hasRole', args: [r.account, r.role] })),
  );
  for (const [i, r] of roles.entries()) {
    if (has[i]) continue;
    await send(`granting ${r.label}`, plan.roleStore.address, encodeFunctionData({ abi: devnetGmxAbis.roleStore, functionName: 'grantRole', args: [r.account, r.role] }));
    deployed.push(`role ${r.label}`);
  }

  const uints = gmxUintConfig(plan);
  const uintNow = await Promise.all(uints.map((u) => readDs<bigint>('getUint', [u.key])));
  const addresses = gmxAddressConfig(plan);
  const addressNow = await Promise.all(addresses.map((a) => readDs<Address>('getAddress', [a.key])));
  let configured = 0;
  for (const [i, u] of uints.entries()) {
    if (uintNow[i] === u.value) continue;
    await send(`setting ${u.name}`, dataStore, ds('setUint', [u.key, u.value]));
    configured += 1;
  }
  for (const [i, a] of addresses.entries()) {
    if (addressNow[i]?.toLowerCase() === a.value.toLowerCase()) continue;
    await send(`setting ${a.name}`, dataStore, ds('setAddress', [a.key, a.value]));
    configured += 1;
  }
  if (!(await readDs<boolean>('containsAddress', [dsKeys.marketList, plan.market.marketToken]))) {
    await send('listing the market', dataStore, ds('addAddress', [dsKeys.marketList, plan.market.marketToken]));
    configured += 1;
  }
  if (configured > 0) deployed.push(`${configured} DataStore settings`);

  if (!(await readDs<boolean>('getBool', [SEEDED_KEY]))) {
    await seedPools(plan, send, ds);
    await send('marking the seed', dataStore, ds('setBool', [SEEDED_KEY, true]));
    deployed.push(`pool seed ${formatEther(ETH_USD_MARKET.seed.long)} WETH + ${ETH_USD_MARKET.seed.short / 10n ** 6n} USDC, impact pool ${formatEther(ETH_USD_MARKET.impactPool)} WETH`);
  }

  if (!(await readDs<boolean>('getBool', [GM_SEEDED_KEY]))) {
    const gm = seedMarketTokens(plan);
    await send('minting the seed\'s GM', plan.market.marketToken, encodeFunctionData({ abi: devnetGmxAbis.marketToken, functionName: 'mint', args: [ctx.deployer.address, gm] }));
    await send('marking the GM seed', dataStore, ds('setBool', [GM_SEEDED_KEY, true]));
    deployed.push(`${formatEther(gm)} GM for the seed`);
  }

  const keeperBalance = await client.getBalance({ address: keeper });
  if (keeperBalance < KEEPER_FUNDING / 2n) {
    await send('funding the keeper', keeper, '0x', KEEPER_FUNDING - keeperBalance);
    deployed.push(`keeper gas ${formatEther(KEEPER_FUNDING - keeperBalance)} ETH`);
  }

  await verifyGmx({ chain: ctx.chain, plan });
  if (deployed.length > 0) ctx.log(`${ctx.name}: gmxV2 ${ETH_USD_MARKET.name} at ${plan.market.marketToken}: ${deployed.join(', ')}`);
  return {
    deployed,
    config: {
      dataStore,
      exchangeRouter: plan.exchangeRouter.address,
      reader: plan.reader.address,
      router: plan.router.address,
      orderVault: plan.orderVault.address,
      depositVault: plan.depositVault.address,
      withdrawalVault: plan.withdrawalVault.address,
      eventEmitter: plan.eventEmitter.address,
      referralStorage: NO_REFERRAL_STORAGE,
      wnt: plan.wnt,
      markets: [plan.market.marketToken],
      oracleUrl: GMX_ORACLE_URL_PENDING,
      executionFeeBufferBps: 3_000,
    },
  };
}

/**
 * The seed's GM (18 decimals) at $1 per GM for the seed's USD at the feeds' starting prices (100 WETH × $3000 +
 * 300,000 USDC = 600,000 GM), minted to the protocol deployer: GM's price is then the pool's value per token.
 */
export function seedMarketTokens(plan: GmxDeployments): bigint {
  const m = ETH_USD_MARKET;
  // amount × feed price (FEED_DECIMALS) → USD with GM's 18 decimals.
  const usd18 = (symbol: string, amount: bigint): bigint => {
    const feed = plan.feeds.find((f) => f.symbol === symbol)!;
    const price = m.feeds.find((f) => f.symbol === symbol)!.priceUsd;
    return (amount * price * 10n ** BigInt(18 - feed.decimals)) / 10n ** BigInt(FEED_DECIMALS);
  };
  return usd18(m.long, m.seed.long) + usd18(m.short, m.seed.short);
}

/** The market's tokens (WETH wrapped from the deployer's ETH, so it can be unwrapped again; USDC minted), recorded. */
async function seedPools(plan: GmxDeployments, send: (what: string, to: Address, data: Hex, value?: bigint) => Promise<void>, ds: (f: string, a: unknown[]) => Hex) {
  const m = plan.market;
  const seed = ETH_USD_MARKET.seed;
  const weth = seed.long + ETH_USD_MARKET.impactPool;
  await send('wrapping the WETH seed', m.longToken, encodeFunctionData({ abi: testWethAbi, functionName: 'deposit' }), weth);
  await send('moving the WETH seed', m.longToken, encodeFunctionData({ abi: testStablecoinAbi, functionName: 'transfer', args: [m.marketToken, weth] }));
  await send('minting the USDC seed', m.shortToken, encodeFunctionData({ abi: testStablecoinAbi, functionName: 'mint', args: [m.marketToken, seed.short] }));
  await send('recording the WETH pool', plan.dataStore.address, ds('applyDeltaToUint', [dsKeys.marketToken('POOL_AMOUNT', m.marketToken, m.longToken), seed.long, 'seed']));
  await send('recording the USDC pool', plan.dataStore.address, ds('applyDeltaToUint', [dsKeys.marketToken('POOL_AMOUNT', m.marketToken, m.shortToken), seed.short, 'seed']));
  await send('recording the impact pool', plan.dataStore.address, ds('applyDeltaToUint', [dsKeys.market('POSITION_IMPACT_POOL_AMOUNT', m.marketToken), ETH_USD_MARKET.impactPool, 'seed']));
}
