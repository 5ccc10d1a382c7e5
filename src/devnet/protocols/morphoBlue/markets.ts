import { formatUnits, parseUnits, type Address, type Hex } from 'viem';
import type { TokenSymbol } from '../../../config/chainConfig.ts';
import type { MorphoMarketParams } from '../../../protocols/morphoBlue/config.ts';
import type { DevnetChain } from '../../manifest.ts';
import { marketId, type MarketParams } from '../../../protocols/morphoBlue/markets.ts';
import type { MorphoBlueContracts } from './contracts.ts';

// Morpho's MarketParams (lltv a bigint; the config keeps it as a decimal string) and its market id, as the service reads them.
export { marketId, type MarketParams };

/**
 * The one pair the devnet's markets lend: USDC against WETH, priced by one OracleMock at `collateralPrice` whole
 * USDC per WETH. The markets differ by their liquidation LTV only (Morpho's 86 % and 94.5 % tiers).
 */
export const DEVNET_PAIR = { loan: 'USDC', collateral: 'WETH', collateralPrice: 3000n } as const satisfies {
  loan: TokenSymbol;
  collateral: TokenSymbol;
  collateralPrice: bigint;
};
export const DEVNET_LLTVS: readonly bigint[] = [parseUnits('0.86', 18), parseUnits('0.945', 18)];
/** Whole loan tokens the deployer supplies to each market, so that borrowing works from the first block. */
export const SEED_SUPPLY = 1_000_000n;

/**
 * An oracle price as Morpho reads it: loan-token units per collateral-token unit, scaled by 1e36 (so 1 WETH at
 * 3000 USDC is 3000 × 1e36 × 1e6 / 1e18). `perCollateral` is in whole loan tokens per whole collateral token.
 */
export function oraclePrice(perCollateral: bigint, loanDecimals: number, collateralDecimals: number): bigint {
  const exponent = 36 + loanDecimals - collateralDecimals;
  if (exponent < 0) throw new Error(`oracle price scale 1e${exponent} is below 1: loan ${loanDecimals} vs collateral ${collateralDecimals} decimals`);
  return perCollateral * 10n ** BigInt(exponent);
}

/** A readable name for logs and errors, e.g. `USDC/WETH 86%` (loan/collateral, lltv). */
export function marketLabel(loan: string, collateral: string, lltv: bigint): string {
  return `${loan}/${collateral} ${Number(formatUnits(lltv * 100n, 18))}%`;
}

export interface DevnetMarket {
  label: string;
  id: Hex;
  params: MarketParams;
}

/** What the devnet sets up on one chain: the OracleMock's price and the markets (its tokens, the IrmMock, the OracleMock). */
export interface DevnetMarkets {
  loan: { symbol: TokenSymbol; address: Address; decimals: number };
  oraclePrice: bigint;
  markets: DevnetMarket[];
}

export function devnetMarkets(tokens: DevnetChain['tokens'], contracts: MorphoBlueContracts): DevnetMarkets {
  const token = (symbol: TokenSymbol) => {
    const t = tokens.find((x) => x.symbol === symbol);
    if (!t) throw new Error(`morphoBlue: the devnet has no ${symbol} token on this chain (tokens: ${tokens.map((x) => x.symbol).join(', ')})`);
    return t;
  };
  const loan = token(DEVNET_PAIR.loan);
  const collateral = token(DEVNET_PAIR.collateral);
  return {
    loan: { symbol: loan.symbol, address: loan.address, decimals: loan.decimals },
    oraclePrice: oraclePrice(DEVNET_PAIR.collateralPrice, loan.decimals, collateral.decimals),
    markets: DEVNET_LLTVS.map((lltv) => {
      const params: MarketParams = {
        loanToken: loan.address,
        collateralToken: collateral.address,
        oracle: contracts.oracle.address,
        irm: contracts.irm.address,
        lltv,
      };
      return { label: marketLabel(loan.symbol, collateral.symbol, lltv), id: marketId(params), params };
    }),
  };
}

/** The config's form of MarketParams (src/protocols/morphoBlue/config.ts): lltv as a decimal string. */
export function marketConfig(p: MarketParams): MorphoMarketParams {
  return { ...p, lltv: p.lltv.toString() };
}
