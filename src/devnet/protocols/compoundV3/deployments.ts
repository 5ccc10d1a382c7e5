import { encodeDeployData, getContractAddress, keccak256, stringToHex, type Abi, type Address, type Hex } from 'viem';
import cometArtifact from '../../artifacts/DevnetComet.json' with { type: 'json' };
import { CREATE2_DEPLOYER, devnetPriceFeedDeployData, type Create2Deployment } from '../../contracts.ts';
import type { DevnetChain } from '../../manifest.ts';
import { USDC_MARKET, type CometMarket } from './market.ts';

/**
 * Compound v3's own salt: with CREATE2 the addresses follow from salt and init code alone, never from the order
 * protocols deploy in or from the deployer's nonce.
 */
export const COMPOUND_V3_SALT: Hex = keccak256(stringToHex('agent-wallet/devnet/compoundV3/v1'));

const PRICE_FEED_DECIMALS = 8;

/** What the devnet deploys for one market, in deployment order (the Comet's constructor reads its feeds). */
export interface CometDeployments {
  baseFeed: Create2Deployment;
  collateralFeeds: Create2Deployment[];
  comet: Create2Deployment;
  /** All of the above, feeds first. */
  all: Create2Deployment[];
}

function create2(label: string, initCode: Hex): Create2Deployment {
  const address = getContractAddress({ opcode: 'CREATE2', from: CREATE2_DEPLOYER, salt: COMPOUND_V3_SALT, bytecode: initCode });
  return { label, salt: COMPOUND_V3_SALT, initCode, address };
}

/** The token of that symbol on this chain, or an error naming what the chain has. */
export function tokenOf(tokens: DevnetChain['tokens'], symbol: string): { address: Address; decimals: number } {
  const token = tokens.find((t) => t.symbol === symbol);
  if (!token) throw new Error(`compoundV3: the devnet chain has no ${symbol} token (it has ${tokens.map((t) => t.symbol).join(', ')})`);
  return token;
}

/**
 * The market's price feeds (DevnetPriceFeeds owned by `owner`, who may move their answers) and its Comet, with
 * their init code and CREATE2 addresses. Pure: nothing is read from the chain.
 */
export function cometDeployments(p: { tokens: DevnetChain['tokens']; owner: Address; market?: CometMarket }): CometDeployments {
  const market = p.market ?? USDC_MARKET;
  const feed = (symbol: string, answer: bigint): Create2Deployment =>
    create2(
      `DevnetPriceFeed ${symbol} / USD`,
      devnetPriceFeedDeployData({ decimals: PRICE_FEED_DECIMALS, description: `${symbol} / USD`, answer, owner: p.owner }),
    );
  const base = tokenOf(p.tokens, market.base.symbol);
  const baseFeed = feed(market.base.symbol, market.base.priceUsd);
  const collateralFeeds = market.collateral.map((c) => feed(c.symbol, c.priceUsd));
  const comet = create2(
    `DevnetComet ${market.symbol}`,
    encodeDeployData({
      abi: cometArtifact.abi as Abi,
      bytecode: cometArtifact.bytecode as Hex,
      args: [
        {
          name: market.name,
          symbol: market.symbol,
          baseToken: base.address,
          baseTokenPriceFeed: baseFeed.address,
          baseBorrowMin: market.baseBorrowMin,
          ...market.rates,
          assetConfigs: market.collateral.map((c, i) => {
            const token = tokenOf(p.tokens, c.symbol);
            return {
              asset: token.address,
              priceFeed: collateralFeeds[i]!.address,
              decimals: token.decimals,
              borrowCollateralFactor: c.borrowCollateralFactor,
              liquidateCollateralFactor: c.liquidateCollateralFactor,
              liquidationFactor: c.liquidationFactor,
              supplyCap: c.supplyCap,
            };
          }),
        },
      ],
    }),
  );
  return { baseFeed, collateralFeeds, comet, all: [baseFeed, ...collateralFeeds, comet] };
}
