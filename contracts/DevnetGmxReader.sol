// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {GmxErrors, GmxFields, GmxKeys, GmxMath, GmxStore, GmxTypes, IGmxDataStore} from "DevnetGmxCommon.sol";

/// @notice GMX v2's SyntheticsReader for the devnet, the real ABI's return types for what a trading client reads:
/// markets and their info (borrowing rates, funding per size, the next funding), positions with their pending
/// fees, PnL and the price impact of closing them, orders, and the execution price of a size change. Deposits,
/// withdrawals and market token prices: its fallback delegatecalls the liquidity facet (DevnetGmxLiquidityReader),
/// which answers NotOnTheDevnet for anything else.
contract DevnetGmxReader {
    struct CollateralType {
        uint256 longToken;
        uint256 shortToken;
    }

    struct PositionType {
        CollateralType long;
        CollateralType short;
    }

    struct BaseFundingValues {
        PositionType fundingFeeAmountPerSize;
        PositionType claimableFundingAmountPerSize;
    }

    struct GetNextFundingAmountPerSizeResult {
        bool longsPayShorts;
        uint256 fundingFactorPerSecond;
        int256 nextSavedFundingFactorPerSecond;
        PositionType fundingFeeAmountPerSizeDelta;
        PositionType claimableFundingAmountPerSizeDelta;
    }

    struct VirtualInventory {
        uint256 virtualPoolAmountForLongToken;
        uint256 virtualPoolAmountForShortToken;
        int256 virtualInventoryForPositions;
    }

    struct MarketInfo {
        GmxTypes.MarketProps market;
        uint256 borrowingFactorPerSecondForLongs;
        uint256 borrowingFactorPerSecondForShorts;
        BaseFundingValues baseFunding;
        GetNextFundingAmountPerSizeResult nextFunding;
        VirtualInventory virtualInventory;
        bool isDisabled;
    }

    struct PositionReferralFees {
        bytes32 referralCode;
        address affiliate;
        address trader;
        uint256 totalRebateFactor;
        uint256 affiliateRewardFactor;
        uint256 adjustedAffiliateRewardFactor;
        uint256 traderDiscountFactor;
        uint256 totalRebateAmount;
        uint256 traderDiscountAmount;
        uint256 affiliateRewardAmount;
    }

    struct PositionProFees {
        uint256 traderTier;
        uint256 traderDiscountFactor;
        uint256 traderDiscountAmount;
    }

    struct PositionFundingFees {
        uint256 fundingFeeAmount;
        uint256 claimableLongTokenAmount;
        uint256 claimableShortTokenAmount;
        uint256 latestFundingFeeAmountPerSize;
        uint256 latestLongTokenClaimableFundingAmountPerSize;
        uint256 latestShortTokenClaimableFundingAmountPerSize;
    }

    struct PositionBorrowingFees {
        uint256 borrowingFeeUsd;
        uint256 borrowingFeeAmount;
        uint256 borrowingFeeReceiverFactor;
        uint256 borrowingFeeAmountForFeeReceiver;
    }

    struct PositionUiFees {
        address uiFeeReceiver;
        uint256 uiFeeReceiverFactor;
        uint256 uiFeeAmount;
    }

    struct PositionLiquidationFees {
        uint256 liquidationFeeUsd;
        uint256 liquidationFeeAmount;
        uint256 liquidationFeeReceiverFactor;
        uint256 liquidationFeeAmountForFeeReceiver;
    }

    struct PositionFees {
        PositionReferralFees referral;
        PositionProFees pro;
        PositionFundingFees funding;
        PositionBorrowingFees borrowing;
        PositionUiFees ui;
        PositionLiquidationFees liquidation;
        GmxTypes.PriceProps collateralTokenPrice;
        uint256 positionFeeFactor;
        uint256 protocolFeeAmount;
        uint256 positionFeeReceiverFactor;
        uint256 feeReceiverAmount;
        uint256 feeAmountForPool;
        uint256 positionFeeAmountForPool;
        uint256 positionFeeAmount;
        uint256 totalCostAmountExcludingFunding;
        uint256 totalCostAmount;
        uint256 totalDiscountAmount;
    }

    struct ExecutionPriceResult {
        int256 priceImpactUsd;
        uint256 executionPrice;
        bool balanceWasImproved;
        int256 proportionalPendingImpactUsd;
        int256 totalImpactUsd;
        uint256 priceImpactDiffUsd;
    }

    struct PositionInfo {
        bytes32 positionKey;
        GmxTypes.PositionProps position;
        PositionFees fees;
        ExecutionPriceResult executionPriceResult;
        int256 basePnlUsd;
        int256 uncappedBasePnlUsd;
        int256 pnlAfterPriceImpactUsd;
    }

    struct OrderInfo {
        bytes32 orderKey;
        GmxTypes.OrderProps order;
    }

    error NotOnTheDevnet(bytes4 selector);
    error MissingMarketPrices(address market);

    /// Deposits, withdrawals and market token prices (this contract is near the code size limit).
    address private immutable liquidityFacet;

    constructor(address liquidityFacet_) {
        liquidityFacet = liquidityFacet_;
    }

    /// The liquidity facet's code run as this contract's, its result or revert data passed on as they are.
    fallback() external {
        address facet = liquidityFacet;
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), facet, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            if iszero(ok) { revert(0, returndatasize()) }
            return(0, returndatasize())
        }
    }

    function getMarket(IGmxDataStore dataStore, address key) external view returns (GmxTypes.MarketProps memory) {
        return GmxStore.getMarket(dataStore, key);
    }

    function getMarkets(IGmxDataStore dataStore, uint256 start, uint256 end) external view returns (GmxTypes.MarketProps[] memory markets) {
        address[] memory keys = dataStore.getAddressValuesAt(GmxKeys.MARKET_LIST, start, end);
        markets = new GmxTypes.MarketProps[](keys.length);
        for (uint256 i = 0; i < keys.length; i++) markets[i] = GmxStore.getMarket(dataStore, keys[i]);
    }

    function getMarketInfo(IGmxDataStore dataStore, GmxTypes.MarketPrices memory prices, address marketKey) external view returns (MarketInfo memory) {
        return _marketInfo(dataStore, prices, marketKey);
    }

    function getMarketInfoList(IGmxDataStore dataStore, GmxTypes.MarketPrices[] memory marketPricesList, uint256 start, uint256 end)
        external
        view
        returns (MarketInfo[] memory infos)
    {
        address[] memory keys = dataStore.getAddressValuesAt(GmxKeys.MARKET_LIST, start, end);
        infos = new MarketInfo[](keys.length);
        for (uint256 i = 0; i < keys.length; i++) infos[i] = _marketInfo(dataStore, marketPricesList[i], keys[i]);
    }

    function getAccountPositions(IGmxDataStore dataStore, address account, uint256 start, uint256 end)
        external
        view
        returns (GmxTypes.PositionProps[] memory positions)
    {
        bytes32[] memory keys = dataStore.getBytes32ValuesAt(GmxKeys.accountPositionList(account), start, end);
        positions = new GmxTypes.PositionProps[](keys.length);
        for (uint256 i = 0; i < keys.length; i++) positions[i] = GmxStore.getPosition(dataStore, keys[i]);
    }

    function getPositionInfo(
        IGmxDataStore dataStore,
        address, /* referralStorage: no referrals on the devnet */
        bytes32 positionKey,
        GmxTypes.MarketPrices memory prices,
        uint256 sizeDeltaUsd,
        address uiFeeReceiver,
        bool usePositionSizeAsSizeDeltaUsd
    ) external view returns (PositionInfo memory) {
        return _positionInfo(dataStore, positionKey, prices, sizeDeltaUsd, uiFeeReceiver, usePositionSizeAsSizeDeltaUsd);
    }

    function getAccountPositionInfoList(
        IGmxDataStore dataStore,
        address, /* referralStorage */
        address account,
        address[] memory markets,
        GmxTypes.MarketPrices[] memory marketPrices,
        address uiFeeReceiver,
        uint256 start,
        uint256 end
    ) external view returns (PositionInfo[] memory infos) {
        bytes32[] memory keys = dataStore.getBytes32ValuesAt(GmxKeys.accountPositionList(account), start, end);
        infos = new PositionInfo[](keys.length);
        for (uint256 i = 0; i < keys.length; i++) {
            address market = dataStore.getAddress(GmxKeys.field(keys[i], GmxFields.MARKET));
            uint256 at = markets.length;
            for (uint256 j = 0; j < markets.length; j++) {
                if (markets[j] == market) at = j;
            }
            if (at == markets.length) revert MissingMarketPrices(market);
            infos[i] = _positionInfo(dataStore, keys[i], marketPrices[at], 0, uiFeeReceiver, true);
        }
    }

    function getOrder(IGmxDataStore dataStore, bytes32 key) external view returns (GmxTypes.OrderProps memory) {
        return GmxStore.getOrder(dataStore, key);
    }

    function getAccountOrders(IGmxDataStore dataStore, address account, uint256 start, uint256 end) external view returns (OrderInfo[] memory orders) {
        bytes32[] memory keys = dataStore.getBytes32ValuesAt(GmxKeys.accountOrderList(account), start, end);
        orders = new OrderInfo[](keys.length);
        for (uint256 i = 0; i < keys.length; i++) orders[i] = OrderInfo(keys[i], GmxStore.getOrder(dataStore, keys[i]));
    }

    /// The price impact and execution price of changing a position by `sizeDeltaUsd` (positive: increase).
    function getExecutionPrice(
        IGmxDataStore dataStore,
        address marketKey,
        GmxTypes.MarketPrices memory prices,
        uint256, /* positionSizeInUsd */
        uint256, /* positionSizeInTokens */
        int256 sizeDeltaUsd,
        int256, /* pendingImpactAmount: always 0 on the devnet */
        bool isLong
    ) external view returns (ExecutionPriceResult memory r) {
        GmxTypes.MarketProps memory m = GmxStore.getMarket(dataStore, marketKey);
        r.priceImpactUsd = GmxMath.priceImpactUsd(dataStore, m, prices, isLong, sizeDeltaUsd);
        r.totalImpactUsd = r.priceImpactUsd;
        r.balanceWasImproved = r.priceImpactUsd > 0;
        if (sizeDeltaUsd >= 0) {
            uint256 price = isLong ? prices.indexTokenPrice.max : prices.indexTokenPrice.min;
            int256 impactTokens = r.priceImpactUsd > 0 ? r.priceImpactUsd / int256(prices.indexTokenPrice.max) : r.priceImpactUsd / int256(prices.indexTokenPrice.min);
            int256 tokens = int256(uint256(sizeDeltaUsd) / price) + (isLong ? impactTokens : -impactTokens);
            r.executionPrice = tokens <= 0 ? price : uint256(sizeDeltaUsd) / uint256(tokens);
        } else {
            r.executionPrice = GmxMath.decreaseExecutionPrice(GmxMath.pnlPrice(prices, isLong), uint256(-sizeDeltaUsd), r.priceImpactUsd, isLong);
        }
    }

    function _marketInfo(IGmxDataStore ds, GmxTypes.MarketPrices memory prices, address marketKey) private view returns (MarketInfo memory info) {
        GmxTypes.MarketProps memory m = GmxStore.getMarket(ds, marketKey);
        info.market = m;
        info.borrowingFactorPerSecondForLongs = GmxMath.borrowingFactorPerSecond(ds, m, prices, true);
        info.borrowingFactorPerSecondForShorts = GmxMath.borrowingFactorPerSecond(ds, m, prices, false);
        info.baseFunding.fundingFeeAmountPerSize = _positionType(ds, GmxKeys.FUNDING_FEE_AMOUNT_PER_SIZE, m);
        info.baseFunding.claimableFundingAmountPerSize = _positionType(ds, GmxKeys.CLAIMABLE_FUNDING_AMOUNT_PER_SIZE, m);
        GmxMath.Funding memory f = GmxMath.nextFunding(ds, m, prices);
        info.nextFunding.longsPayShorts = f.longsPayShorts;
        info.nextFunding.fundingFactorPerSecond = f.factorPerSecond;
        info.nextFunding.nextSavedFundingFactorPerSecond = f.longsPayShorts ? int256(f.factorPerSecond) : -int256(f.factorPerSecond);
        info.nextFunding.fundingFeeAmountPerSizeDelta = _fromMatrix(f.feePerSizeDelta);
        info.nextFunding.claimableFundingAmountPerSizeDelta = _fromMatrix(f.claimablePerSizeDelta);
        info.isDisabled = ds.getBool(GmxKeys.isMarketDisabled(marketKey));
    }

    function _positionType(IGmxDataStore ds, bytes32 base, GmxTypes.MarketProps memory m) private view returns (PositionType memory t) {
        t.long.longToken = ds.getUint(GmxKeys.marketTokenBool(base, m.marketToken, m.longToken, true));
        t.long.shortToken = ds.getUint(GmxKeys.marketTokenBool(base, m.marketToken, m.shortToken, true));
        t.short.longToken = ds.getUint(GmxKeys.marketTokenBool(base, m.marketToken, m.longToken, false));
        t.short.shortToken = ds.getUint(GmxKeys.marketTokenBool(base, m.marketToken, m.shortToken, false));
    }

    function _fromMatrix(uint256[2][2] memory v) private pure returns (PositionType memory t) {
        t.long = CollateralType(v[0][0], v[0][1]);
        t.short = CollateralType(v[1][0], v[1][1]);
    }

    function _positionInfo(
        IGmxDataStore ds,
        bytes32 positionKey,
        GmxTypes.MarketPrices memory prices,
        uint256 sizeDeltaUsd,
        address uiFeeReceiver,
        bool usePositionSizeAsSizeDeltaUsd
    ) private view returns (PositionInfo memory info) {
        info.positionKey = positionKey;
        info.position = GmxStore.getPosition(ds, positionKey);
        if (info.position.addresses.account == address(0)) revert GmxErrors.EmptyPosition();
        GmxTypes.MarketProps memory m = GmxStore.getMarket(ds, info.position.addresses.market);
        if (usePositionSizeAsSizeDeltaUsd) sizeDeltaUsd = info.position.numbers.sizeInUsd;
        info.fees.collateralTokenPrice = GmxMath.collateralPrice(m, prices, info.position.addresses.collateralToken);
        info.fees.referral.trader = info.position.addresses.account;
        info.fees.ui.uiFeeReceiver = uiFeeReceiver;
        _fundingFees(ds, m, prices, info);
        _executionPrice(ds, m, prices, info, sizeDeltaUsd);
        _costs(ds, m, info, sizeDeltaUsd);
    }

    function _fundingFees(IGmxDataStore ds, GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory prices, PositionInfo memory info) private view {
        GmxTypes.PositionProps memory p = info.position;
        bool isLong = p.flags.isLong;
        uint256 side = isLong ? 0 : 1;
        GmxMath.Funding memory f = GmxMath.nextFunding(ds, m, prices);
        uint256 t = p.addresses.collateralToken == m.longToken ? 0 : 1;
        PositionFundingFees memory fees = info.fees.funding;
        fees.latestFundingFeeAmountPerSize = GmxMath.fundingPerSize(ds, m.marketToken, p.addresses.collateralToken, isLong, f.feePerSizeDelta[side][t]);
        fees.latestLongTokenClaimableFundingAmountPerSize = GmxMath.claimablePerSize(ds, m.marketToken, m.longToken, isLong, f.claimablePerSizeDelta[side][0]);
        fees.latestShortTokenClaimableFundingAmountPerSize = GmxMath.claimablePerSize(ds, m.marketToken, m.shortToken, isLong, f.claimablePerSizeDelta[side][1]);
        uint256 size = p.numbers.sizeInUsd;
        fees.fundingFeeAmount = GmxMath.fundingAmount(fees.latestFundingFeeAmountPerSize, p.numbers.fundingFeeAmountPerSize, size);
        fees.claimableLongTokenAmount = GmxMath.fundingAmount(fees.latestLongTokenClaimableFundingAmountPerSize, p.numbers.longTokenClaimableFundingAmountPerSize, size);
        fees.claimableShortTokenAmount = GmxMath.fundingAmount(fees.latestShortTokenClaimableFundingAmountPerSize, p.numbers.shortTokenClaimableFundingAmountPerSize, size);
        uint256 cumulative = GmxMath.nextCumulativeBorrowingFactor(ds, m, prices, isLong);
        PositionBorrowingFees memory borrowing = info.fees.borrowing;
        if (cumulative > p.numbers.borrowingFactor) borrowing.borrowingFeeUsd = GmxMath.applyFactor(size, cumulative - p.numbers.borrowingFactor);
        borrowing.borrowingFeeAmount = borrowing.borrowingFeeUsd / info.fees.collateralTokenPrice.min;
    }

    /// Closing `sizeDeltaUsd` of the position: the price impact, the execution price, the base PnL of that part.
    function _executionPrice(IGmxDataStore ds, GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory prices, PositionInfo memory info, uint256 sizeDeltaUsd)
        private
        view
    {
        GmxTypes.PositionNumbers memory n = info.position.numbers;
        bool isLong = info.position.flags.isLong;
        uint256 price = GmxMath.pnlPrice(prices, isLong);
        ExecutionPriceResult memory r = info.executionPriceResult;
        r.priceImpactUsd = GmxMath.priceImpactUsd(ds, m, prices, isLong, -int256(sizeDeltaUsd));
        r.totalImpactUsd = r.priceImpactUsd;
        r.balanceWasImproved = r.priceImpactUsd > 0;
        r.executionPrice = GmxMath.decreaseExecutionPrice(price, sizeDeltaUsd, r.priceImpactUsd, isLong);
        int256 totalPnl = GmxMath.positionPnlUsd(n.sizeInUsd, n.sizeInTokens, price, isLong);
        uint256 tokens = sizeDeltaUsd == n.sizeInUsd ? n.sizeInTokens : (n.sizeInTokens * sizeDeltaUsd) / n.sizeInUsd;
        info.basePnlUsd = n.sizeInTokens == 0 ? int256(0) : (totalPnl * int256(tokens)) / int256(n.sizeInTokens);
        info.uncappedBasePnlUsd = info.basePnlUsd;
        info.pnlAfterPriceImpactUsd = info.basePnlUsd + r.totalImpactUsd;
    }

    function _costs(IGmxDataStore ds, GmxTypes.MarketProps memory m, PositionInfo memory info, uint256 sizeDeltaUsd) private view {
        PositionFees memory fees = info.fees;
        fees.positionFeeFactor = ds.getUint(GmxKeys.marketBool(GmxKeys.POSITION_FEE_FACTOR, m.marketToken, info.executionPriceResult.balanceWasImproved));
        fees.positionFeeAmount = GmxMath.applyFactor(sizeDeltaUsd, fees.positionFeeFactor) / fees.collateralTokenPrice.min;
        fees.positionFeeAmountForPool = fees.positionFeeAmount;
        fees.feeAmountForPool = fees.positionFeeAmount + fees.borrowing.borrowingFeeAmount;
        fees.totalCostAmountExcludingFunding = fees.positionFeeAmount + fees.borrowing.borrowingFeeAmount;
        fees.totalCostAmount = fees.totalCostAmountExcludingFunding + fees.funding.fundingFeeAmount;
    }
}
