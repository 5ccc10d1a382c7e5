// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {GmxStore, GmxTypes, IGmxDataStore} from "DevnetGmxCommon.sol";
import {GmxDepositStore, GmxLiquidityTypes, GmxPool, GmxWithdrawalStore, IGmxMarketToken} from "DevnetGmxLiquidity.sol";

/// @notice The SyntheticsReader's liquidity functions, with GMX's ABI: the Reader (near the code size limit)
/// delegatecalls its fallback here. Deposits and withdrawals by key, the GM price (MarketUtils.getMarketTokenPrice)
/// and what a deposit or a withdrawal would get at given prices, computed as the handlers execute them.
contract DevnetGmxLiquidityReader {
    error NotOnTheDevnet(bytes4 selector);

    /// GLV, shifts and the rest of GMX's Reader.
    fallback() external {
        revert NotOnTheDevnet(msg.sig);
    }

    function getDeposit(IGmxDataStore dataStore, bytes32 key) external view returns (GmxLiquidityTypes.DepositProps memory) {
        return GmxDepositStore.get(dataStore, key);
    }

    function getWithdrawal(IGmxDataStore dataStore, bytes32 key) external view returns (GmxLiquidityTypes.WithdrawalProps memory) {
        return GmxWithdrawalStore.get(dataStore, key);
    }

    /// The USD value (30 decimals) of one GM (10^18 units): pool value / supply; $1 while there is no supply.
    /// `pnlFactorType` (GMX's max PnL factor cap) is not applied on the devnet.
    function getMarketTokenPrice(
        IGmxDataStore dataStore,
        GmxTypes.MarketProps memory market,
        GmxTypes.PriceProps memory indexTokenPrice,
        GmxTypes.PriceProps memory longTokenPrice,
        GmxTypes.PriceProps memory shortTokenPrice,
        bytes32,
        bool maximize
    ) external view returns (int256 price, GmxLiquidityTypes.PoolValueInfo memory info) {
        info = GmxPool.poolValueInfo(dataStore, market, GmxTypes.MarketPrices(indexTokenPrice, longTokenPrice, shortTokenPrice), maximize);
        uint256 supply = IGmxMarketToken(market.marketToken).totalSupply();
        price = supply == 0 ? int256(1e30) : (info.poolValue * 1e18) / int256(supply);
    }

    /// The GM a deposit of these amounts mints at these prices (the fee of swapPricingType taken; the UI fee and virtual
    /// inventory, not on the devnet, ignored; the swap price impact applied).
    function getDepositAmountOut(
        IGmxDataStore dataStore,
        GmxTypes.MarketProps memory market,
        GmxTypes.MarketPrices memory prices,
        uint256 longTokenAmount,
        uint256 shortTokenAmount,
        address,
        uint8 swapPricingType,
        bool
    ) external view returns (uint256) {
        return GmxPool.depositOut(dataStore, GmxStore.getMarket(dataStore, market.marketToken), prices, longTokenAmount, shortTokenAmount, swapPricingType).marketTokens;
    }

    /// Not GMX's: the deposit's whole effect (GM, fees, swap price impact, pool and swap impact pool changes), which
    /// the DepositHandler executes.
    function getDepositBreakdown(
        IGmxDataStore dataStore,
        GmxTypes.MarketProps memory market,
        GmxTypes.MarketPrices memory prices,
        uint256 longTokenAmount,
        uint256 shortTokenAmount,
        uint256 swapPricingType
    ) external view returns (GmxPool.DepositOut memory) {
        return GmxPool.depositOut(dataStore, GmxStore.getMarket(dataStore, market.marketToken), prices, longTokenAmount, shortTokenAmount, swapPricingType);
    }

    /// The long and short tokens a withdrawal of `marketTokenAmount` GM pays at these prices, fees taken.
    function getWithdrawalAmountOut(
        IGmxDataStore dataStore,
        GmxTypes.MarketProps memory market,
        GmxTypes.MarketPrices memory prices,
        uint256 marketTokenAmount,
        address,
        uint8 swapPricingType
    ) external view returns (uint256, uint256) {
        GmxPool.WithdrawalOut memory out = GmxPool.withdrawalOut(dataStore, GmxStore.getMarket(dataStore, market.marketToken), prices, marketTokenAmount, swapPricingType);
        return (out.longAmount, out.shortAmount);
    }
}
