import { encodeDeployData, getContractAddress, keccak256, stringToHex, zeroAddress, type Abi, type Address, type Hex } from 'viem';
import bankArtifact from '../../artifacts/DevnetGmxBank.json' with { type: 'json' };
import marketTokenArtifact from '../../artifacts/DevnetGmxMarketToken.json' with { type: 'json' };
import dataStoreArtifact from '../../artifacts/DevnetGmxDataStore.json' with { type: 'json' };
import eventEmitterArtifact from '../../artifacts/DevnetGmxEventEmitter.json' with { type: 'json' };
import depositHandlerArtifact from '../../artifacts/DevnetGmxDepositHandler.json' with { type: 'json' };
import exchangeRouterArtifact from '../../artifacts/DevnetGmxExchangeRouter.json' with { type: 'json' };
import liquidityReaderArtifact from '../../artifacts/DevnetGmxLiquidityReader.json' with { type: 'json' };
import liquidityRouterArtifact from '../../artifacts/DevnetGmxLiquidityRouter.json' with { type: 'json' };
import orderHandlerArtifact from '../../artifacts/DevnetGmxOrderHandler.json' with { type: 'json' };
import positionHandlerArtifact from '../../artifacts/DevnetGmxPositionHandler.json' with { type: 'json' };
import readerArtifact from '../../artifacts/DevnetGmxReader.json' with { type: 'json' };
import roleStoreArtifact from '../../artifacts/DevnetGmxRoleStore.json' with { type: 'json' };
import routerArtifact from '../../artifacts/DevnetGmxRouter.json' with { type: 'json' };
import withdrawalHandlerArtifact from '../../artifacts/DevnetGmxWithdrawalHandler.json' with { type: 'json' };
import { CREATE2_DEPLOYER, devnetPriceFeedDeployData, type Create2Deployment } from '../../contracts.ts';
import type { DevnetChain } from '../../manifest.ts';
import { ETH_USD_MARKET, FEED_DECIMALS } from './market.ts';

/** GMX v2's own salt: the addresses follow from salt and init code alone (never the deployer's nonce). */
export const GMX_V2_SALT: Hex = keccak256(stringToHex('agent-wallet/devnet/gmxV2/v1'));

/** The artifacts' ABIs (the devnet's own functions: setters, grantRole, pluginTransfer, executeOrder). */
export const devnetGmxAbis = {
  roleStore: roleStoreArtifact.abi as Abi,
  dataStore: dataStoreArtifact.abi as Abi,
  bank: bankArtifact.abi as Abi,
  orderHandler: orderHandlerArtifact.abi as Abi,
  exchangeRouter: exchangeRouterArtifact.abi as Abi,
  depositHandler: depositHandlerArtifact.abi as Abi,
  withdrawalHandler: withdrawalHandlerArtifact.abi as Abi,
  marketToken: marketTokenArtifact.abi as Abi,
} as const;

export interface GmxFeed {
  symbol: string;
  token: Address;
  decimals: number;
  deployment: Create2Deployment;
}

/** Everything the devnet deploys for GMX v2 on a chain, in deployment order (constructors take earlier addresses). */
export interface GmxDeployments {
  feeds: GmxFeed[];
  roleStore: Create2Deployment;
  dataStore: Create2Deployment;
  eventEmitter: Create2Deployment;
  router: Create2Deployment;
  orderVault: Create2Deployment;
  /** Banks holding deposits' tokens and withdrawals' GM until a keeper executes them. */
  depositVault: Create2Deployment;
  withdrawalVault: Create2Deployment;
  /** The ETH/USD market's token: its GM ERC-20, and the Bank holding its pool and the positions' collateral. */
  marketToken: Create2Deployment;
  positionHandler: Create2Deployment;
  orderHandler: Create2Deployment;
  /** The Reader's liquidity facet (pool value, GM in and out), also called as a contract by the handlers. */
  liquidityReader: Create2Deployment;
  depositHandler: Create2Deployment;
  withdrawalHandler: Create2Deployment;
  /** The ExchangeRouter's liquidity facet: createDeposit/createWithdrawal, cancellations, simulations. */
  liquidityRouter: Create2Deployment;
  exchangeRouter: Create2Deployment;
  reader: Create2Deployment;
  all: Create2Deployment[];
  wnt: Address;
  market: { marketToken: Address; indexToken: Address; longToken: Address; shortToken: Address };
}

function create2At(label: string, initCode: Hex): Create2Deployment {
  return { label, salt: GMX_V2_SALT, initCode, address: getContractAddress({ opcode: 'CREATE2', from: CREATE2_DEPLOYER, salt: GMX_V2_SALT, bytecode: initCode }) };
}

function create2(label: string, artifact: { abi: unknown; bytecode: string }, args: unknown[]): Create2Deployment {
  return create2At(label, encodeDeployData({ abi: artifact.abi as Abi, bytecode: artifact.bytecode as Hex, args }));
}

export function tokenOf(tokens: DevnetChain['tokens'], symbol: string): { address: Address; decimals: number } {
  const token = tokens.find((t) => t.symbol === symbol);
  if (!token) throw new Error(`gmxV2: the devnet chain has no ${symbol} token (it has ${tokens.map((t) => t.symbol).join(', ')})`);
  return token;
}

/** The market's USD feeds (AggregatorV3, 8 decimals), by token: also what the devnet's price configuration reads. */
export function gmxPriceFeeds(p: { tokens: DevnetChain['tokens']; owner: Address }) {
  return ETH_USD_MARKET.feeds.map((f) => {
    const token = tokenOf(p.tokens, f.symbol);
    const deployment = create2At(
      `DevnetPriceFeed ${f.symbol} / USD (GMX v2)`,
      devnetPriceFeedDeployData({ decimals: FEED_DECIMALS, description: `${f.symbol} / USD (GMX v2)`, answer: f.priceUsd, owner: p.owner }),
    );
    return { symbol: f.symbol, token: token.address, decimals: token.decimals, deployment };
  });
}

/** The plan: init code and CREATE2 address of every contract, from the chain's tokens and the owner. Pure. */
export function gmxDeployments(p: { tokens: DevnetChain['tokens']; owner: Address }): GmxDeployments {
  const m = ETH_USD_MARKET;
  const feeds = gmxPriceFeeds(p);
  const wnt = tokenOf(p.tokens, 'WETH').address;
  const roleStore = create2('GMX RoleStore', roleStoreArtifact, [p.owner]);
  const dataStore = create2('GMX DataStore', dataStoreArtifact, [roleStore.address]);
  const eventEmitter = create2('GMX EventEmitter', eventEmitterArtifact, [roleStore.address]);
  const router = create2('GMX Router', routerArtifact, [roleStore.address]);
  const orderVault = create2('GMX OrderVault', bankArtifact, [roleStore.address, wnt, 'OrderVault']);
  const depositVault = create2('GMX DepositVault', bankArtifact, [roleStore.address, wnt, 'DepositVault']);
  const withdrawalVault = create2('GMX WithdrawalVault', bankArtifact, [roleStore.address, wnt, 'WithdrawalVault']);
  const marketToken = create2(`GMX market ${m.name}`, marketTokenArtifact, [roleStore.address, wnt, `GM: ${m.name}`]);
  const positionHandler = create2('GMX PositionHandler', positionHandlerArtifact, [roleStore.address, dataStore.address, eventEmitter.address, orderVault.address]);
  const orderHandler = create2('GMX OrderHandler', orderHandlerArtifact, [
    roleStore.address,
    dataStore.address,
    eventEmitter.address,
    orderVault.address,
    positionHandler.address,
  ]);
  const liquidityReader = create2('GMX Reader liquidity facet', liquidityReaderArtifact, []);
  const depositHandler = create2('GMX DepositHandler', depositHandlerArtifact, [
    roleStore.address,
    dataStore.address,
    eventEmitter.address,
    depositVault.address,
    liquidityReader.address,
  ]);
  const withdrawalHandler = create2('GMX WithdrawalHandler', withdrawalHandlerArtifact, [
    roleStore.address,
    dataStore.address,
    eventEmitter.address,
    withdrawalVault.address,
    liquidityReader.address,
  ]);
  const liquidityRouter = create2('GMX ExchangeRouter liquidity facet', liquidityRouterArtifact, [
    dataStore.address,
    eventEmitter.address,
    depositVault.address,
    withdrawalVault.address,
    depositHandler.address,
    withdrawalHandler.address,
  ]);
  const exchangeRouter = create2('GMX ExchangeRouter', exchangeRouterArtifact, [
    router.address,
    roleStore.address,
    dataStore.address,
    eventEmitter.address,
    orderHandler.address,
    orderVault.address,
    liquidityRouter.address,
  ]);
  const reader = create2('GMX Reader', readerArtifact, [liquidityReader.address]);
  // In deployment order: `all` lists them so.
  const contracts = {
    ...{ roleStore, dataStore, eventEmitter, router, orderVault, depositVault, withdrawalVault, marketToken },
    ...{ positionHandler, orderHandler, liquidityReader, depositHandler, withdrawalHandler, liquidityRouter, exchangeRouter, reader },
  };
  return {
    feeds,
    ...contracts,
    all: [...feeds.map((f) => f.deployment), ...Object.values(contracts)],
    wnt,
    market: {
      marketToken: marketToken.address,
      indexToken: tokenOf(p.tokens, m.index).address,
      longToken: tokenOf(p.tokens, m.long).address,
      shortToken: tokenOf(p.tokens, m.short).address,
    },
  };
}

/** No referral program on the devnet: the config's referralStorage is the zero address. */
export const NO_REFERRAL_STORAGE: Address = zeroAddress;
