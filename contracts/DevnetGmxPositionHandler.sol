// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {
    GmxErrors, GmxEvents, GmxFields, GmxKeys, GmxMath, GmxRoleModule, GmxStore, GmxTypes, IGmxBank, IGmxDataStore, IGmxEventEmitter,
    IGmxRoleStore
} from "DevnetGmxCommon.sol";

/// @notice The position logic of the devnet's GMX v2 (a part of GMX's OrderHandler/IncreasePositionUtils/
/// DecreasePositionUtils, in its own contract for the code size limit): the OrderHandler hands it an order and
/// its prices (funding and borrowing already brought up to date by the OrderHandler); it applies the price impact, checks the acceptable price,
/// charges the position, borrowing and funding fees, updates the position, open interest and pools, pays a
/// decrease out and logs PositionIncrease/PositionDecrease. CONTROLLERs only (the OrderHandler).
contract DevnetGmxPositionHandler is GmxRoleModule {
    /// One execution's working values (kept in memory: the stack is too small for them).
    struct Exec {
        bytes32 key;
        bytes32 positionKey;
        GmxTypes.OrderProps order;
        GmxTypes.MarketProps market;
        GmxTypes.MarketPrices prices;
        GmxTypes.PositionProps position;
        GmxTypes.PriceProps collateralPrice;
        int256 priceImpactUsd;
        int256 priceImpactAmount;
        uint256 executionPrice;
        uint256 sizeDeltaInTokens;
        uint256 feeAmount;
        uint256 fundingFeeAmount;
        int256 basePnlUsd;
        uint256 outputAmount;
        int256 collateralDeltaAmount;
    }

    IGmxDataStore public immutable dataStore;
    IGmxEventEmitter public immutable eventEmitter;
    IGmxBank public immutable orderVault;

    constructor(IGmxRoleStore roleStore_, IGmxDataStore dataStore_, IGmxEventEmitter eventEmitter_, IGmxBank orderVault_)
        GmxRoleModule(roleStore_)
    {
        dataStore = dataStore_;
        eventEmitter = eventEmitter_;
        orderVault = orderVault_;
    }

    function execute(bytes32 key, GmxTypes.OrderProps memory order, GmxTypes.MarketPrices memory prices)
        external
        onlyRole(GmxKeys.CONTROLLER, "CONTROLLER")
    {
        Exec memory x;
        x.key = key;
        x.prices = prices;
        x.order = order;
        x.market = GmxStore.getEnabledMarket(dataStore, order.addresses.market);
        x.positionKey = GmxKeys.positionKey(order.addresses.account, x.market.marketToken, order.addresses.initialCollateralToken, order.flags.isLong);
        x.position = GmxStore.getPosition(dataStore, x.positionKey);
        x.collateralPrice = GmxMath.collateralPrice(x.market, prices, order.addresses.initialCollateralToken);
        if (order.numbers.orderType == GmxTypes.MARKET_INCREASE || order.numbers.orderType == GmxTypes.LIMIT_INCREASE) _increase(x);
        else _decrease(x);
    }

    /// The position's pending fees (position fee on `sizeDeltaUsd`, borrowing, funding) settled: the fee and
    /// funding amounts in collateral tokens into `x`, the claimable funding credited, the snapshots moved on.
    function _settleFees(Exec memory x, uint256 sizeDeltaUsd) private {
        IGmxDataStore ds = dataStore;
        GmxTypes.PositionNumbers memory n = x.position.numbers;
        address market = x.market.marketToken;
        bool isLong = x.order.flags.isLong;
        uint256 cumulative = ds.getUint(GmxKeys.marketBool(GmxKeys.CUMULATIVE_BORROWING_FACTOR, market, isLong));
        uint256 feeUsd = GmxMath.applyFactor(sizeDeltaUsd, ds.getUint(GmxKeys.marketBool(GmxKeys.POSITION_FEE_FACTOR, market, x.priceImpactUsd > 0)));
        if (cumulative > n.borrowingFactor) feeUsd += GmxMath.applyFactor(n.sizeInUsd, cumulative - n.borrowingFactor);
        x.feeAmount = feeUsd / x.collateralPrice.min;
        uint256 perSize = GmxMath.fundingPerSize(ds, market, x.order.addresses.initialCollateralToken, isLong, 0);
        x.fundingFeeAmount = GmxMath.fundingAmount(perSize, n.fundingFeeAmountPerSize, n.sizeInUsd);
        uint256 longClaim = GmxMath.claimablePerSize(ds, market, x.market.longToken, isLong, 0);
        uint256 shortClaim = GmxMath.claimablePerSize(ds, market, x.market.shortToken, isLong, 0);
        _credit(market, x.market.longToken, x.order.addresses.account, GmxMath.fundingAmount(longClaim, n.longTokenClaimableFundingAmountPerSize, n.sizeInUsd));
        _credit(market, x.market.shortToken, x.order.addresses.account, GmxMath.fundingAmount(shortClaim, n.shortTokenClaimableFundingAmountPerSize, n.sizeInUsd));
        n.borrowingFactor = cumulative;
        n.fundingFeeAmountPerSize = perSize;
        n.longTokenClaimableFundingAmountPerSize = longClaim;
        n.shortTokenClaimableFundingAmountPerSize = shortClaim;
    }

    function _credit(address market, address token, address account, uint256 amount) private {
        if (amount > 0) dataStore.incrementUint(GmxKeys.claimableFundingAmount(market, token, account), amount);
    }

    function _increase(Exec memory x) private {
        uint256 sizeDelta = x.order.numbers.sizeDeltaUsd;
        bool isLong = x.order.flags.isLong;
        if (x.position.addresses.account == address(0)) {
            x.position.addresses = GmxTypes.PositionAddresses(x.order.addresses.account, x.market.marketToken, x.order.addresses.initialCollateralToken);
            x.position.flags.isLong = isLong;
        }
        uint256 price = isLong ? x.prices.indexTokenPrice.max : x.prices.indexTokenPrice.min;
        x.priceImpactUsd = GmxMath.priceImpactUsd(dataStore, x.market, x.prices, isLong, int256(sizeDelta));
        x.priceImpactAmount = _impactAmount(x);
        int256 tokens = int256(sizeDelta / price) + (isLong ? x.priceImpactAmount : -x.priceImpactAmount);
        if (tokens < 0 || (tokens == 0 && sizeDelta > 0)) revert GmxErrors.PriceImpactLargerThanOrderSize(x.priceImpactUsd, sizeDelta);
        x.sizeDeltaInTokens = uint256(tokens);
        x.executionPrice = x.sizeDeltaInTokens == 0 ? price : sizeDelta / x.sizeDeltaInTokens;
        uint256 acceptable = x.order.numbers.acceptablePrice;
        if (isLong ? x.executionPrice > acceptable : x.executionPrice < acceptable) {
            revert GmxErrors.OrderNotFulfillableAtAcceptablePrice(x.executionPrice, acceptable);
        }

        _settleFees(x, sizeDelta);
        uint256 collateralIn = x.order.numbers.initialCollateralDeltaAmount;
        uint256 available = x.position.numbers.collateralAmount + collateralIn;
        uint256 costs = x.feeAmount + x.fundingFeeAmount;
        if (costs > available) revert GmxErrors.InsufficientCollateralAmount(available, -int256(costs));
        x.collateralDeltaAmount = int256(collateralIn) - int256(costs);
        orderVault.transferOut(x.order.addresses.initialCollateralToken, x.market.marketToken, collateralIn);

        GmxTypes.PositionNumbers memory n = x.position.numbers;
        n.collateralAmount = available - costs;
        n.sizeInUsd += sizeDelta;
        n.sizeInTokens += x.sizeDeltaInTokens;
        n.increasedAtTime = block.timestamp;
        _applyMarketDeltas(x, int256(sizeDelta), int256(x.sizeDeltaInTokens), int256(x.feeAmount));
        _validatePosition(x);
        _validateReserveAndOpenInterest(x);
        GmxStore.setPosition(dataStore, x.positionKey, x.position);
        _emitPositionEvent(x, "PositionIncrease", sizeDelta);
    }

    function _decrease(Exec memory x) private {
        GmxTypes.PositionNumbers memory n = x.position.numbers;
        if (n.sizeInUsd == 0) revert GmxErrors.EmptyPosition();
        uint256 sizeDelta = x.order.numbers.sizeDeltaUsd;
        if (sizeDelta > n.sizeInUsd) revert GmxErrors.InvalidDecreaseOrderSize(sizeDelta, n.sizeInUsd);
        bool closing = sizeDelta == n.sizeInUsd;
        _decreasePricing(x, sizeDelta, closing);
        _settleFees(x, sizeDelta);
        uint256 collateral = n.collateralAmount;
        int256 remaining = _decreaseCollateral(x, closing, collateral);
        x.collateralDeltaAmount = remaining - int256(collateral);
        // The pool keeps what the position gave up and did not pay out (the funding fee stays for the claimers).
        int256 poolDelta = int256(collateral) - remaining - int256(x.outputAmount) - int256(x.fundingFeeAmount);

        n.sizeInUsd -= sizeDelta;
        n.sizeInTokens -= x.sizeDeltaInTokens;
        n.collateralAmount = uint256(remaining);
        n.decreasedAtTime = block.timestamp;
        _applyMarketDeltas(x, -int256(sizeDelta), -int256(x.sizeDeltaInTokens), poolDelta);
        if (closing) {
            GmxStore.removePosition(dataStore, x.positionKey, x.order.addresses.account);
        } else {
            _validatePosition(x);
            GmxStore.setPosition(dataStore, x.positionKey, x.position);
        }
        _payOut(x);
        _emitPositionEvent(x, "PositionDecrease", sizeDelta);
    }

    /// The decrease's price impact, execution price (checked against the acceptable price), tokens and base PnL.
    function _decreasePricing(Exec memory x, uint256 sizeDelta, bool closing) private view {
        GmxTypes.PositionNumbers memory n = x.position.numbers;
        bool isLong = x.order.flags.isLong;
        uint256 price = GmxMath.pnlPrice(x.prices, isLong);
        x.priceImpactUsd = GmxMath.priceImpactUsd(dataStore, x.market, x.prices, isLong, -int256(sizeDelta));
        x.executionPrice = GmxMath.decreaseExecutionPrice(price, sizeDelta, x.priceImpactUsd, isLong);
        uint256 acceptable = x.order.numbers.acceptablePrice;
        if (isLong ? x.executionPrice < acceptable : x.executionPrice > acceptable) {
            revert GmxErrors.OrderNotFulfillableAtAcceptablePrice(x.executionPrice, acceptable);
        }
        x.priceImpactAmount = _impactAmount(x);
        x.sizeDeltaInTokens = closing ? n.sizeInTokens : (n.sizeInTokens * sizeDelta) / n.sizeInUsd;
        int256 totalPnl = GmxMath.positionPnlUsd(n.sizeInUsd, n.sizeInTokens, price, isLong);
        x.basePnlUsd = n.sizeInTokens == 0 ? int256(0) : (totalPnl * int256(x.sizeDeltaInTokens)) / int256(n.sizeInTokens);
    }

    /// What the decrease pays out (x.outputAmount) and the collateral left: a full close pays collateral + PnL
    /// (after impact) − fees; a partial one pays the collateral withdrawn plus a profit, losses and fees come out
    /// of the remaining collateral.
    function _decreaseCollateral(Exec memory x, bool closing, uint256 collateral) private pure returns (int256 remaining) {
        int256 pnlUsd = x.basePnlUsd + x.priceImpactUsd;
        int256 pnlAmount = pnlUsd > 0 ? pnlUsd / int256(x.collateralPrice.max) : pnlUsd / int256(x.collateralPrice.min);
        int256 costs = int256(x.feeAmount + x.fundingFeeAmount);
        if (closing) {
            int256 total = int256(collateral) + pnlAmount - costs;
            x.outputAmount = total > 0 ? uint256(total) : 0;
            return 0;
        }
        uint256 withdraw = x.order.numbers.initialCollateralDeltaAmount;
        if (withdraw > collateral) withdraw = collateral;
        remaining = int256(collateral) - int256(withdraw) - costs + (pnlAmount < 0 ? pnlAmount : int256(0));
        if (remaining < 0) revert GmxErrors.InsufficientCollateralAmount(collateral, remaining - int256(collateral));
        x.outputAmount = withdraw + (pnlAmount > 0 ? uint256(pnlAmount) : 0);
    }

    /// The impact in index tokens: positive rounded down at the max price, negative rounded up at the min.
    function _impactAmount(Exec memory x) private pure returns (int256) {
        return x.priceImpactUsd > 0
            ? x.priceImpactUsd / int256(x.prices.indexTokenPrice.max)
            : -int256((uint256(-x.priceImpactUsd) + x.prices.indexTokenPrice.min - 1) / x.prices.indexTokenPrice.min);
    }

    function _payOut(Exec memory x) private {
        if (x.outputAmount == 0) return;
        IGmxBank bank = IGmxBank(x.market.marketToken);
        address token = x.order.addresses.initialCollateralToken;
        if (x.order.flags.shouldUnwrapNativeToken && token == dataStore.getAddress(GmxKeys.WNT)) {
            bank.transferOutNativeToken(x.order.addresses.receiver, x.outputAmount);
        } else {
            bank.transferOut(token, x.order.addresses.receiver, x.outputAmount);
        }
    }

    /// Open interest (USD and tokens) of the position's side and collateral, the pool of the collateral token,
    /// and the position impact pool (index tokens: negative impact adds, positive impact pays out).
    function _applyMarketDeltas(Exec memory x, int256 sizeDelta, int256 tokensDelta, int256 poolDelta) private {
        IGmxDataStore ds = dataStore;
        address market = x.market.marketToken;
        address collateral = x.order.addresses.initialCollateralToken;
        bool isLong = x.order.flags.isLong;
        ds.applyDeltaToUint(GmxKeys.marketTokenBool(GmxKeys.OPEN_INTEREST, market, collateral, isLong), sizeDelta, "open interest");
        ds.applyDeltaToUint(GmxKeys.marketTokenBool(GmxKeys.OPEN_INTEREST_IN_TOKENS, market, collateral, isLong), tokensDelta, "open interest in tokens");
        bytes32 poolKey = GmxKeys.marketToken(GmxKeys.POOL_AMOUNT, market, collateral);
        uint256 pool = ds.getUint(poolKey);
        if (poolDelta < 0 && uint256(-poolDelta) > pool) revert GmxErrors.InsufficientPoolAmount(pool, uint256(-poolDelta));
        ds.applyDeltaToUint(poolKey, poolDelta, "pool amount");
        bytes32 impactKey = GmxKeys.marketOnly(GmxKeys.POSITION_IMPACT_POOL_AMOUNT, market);
        uint256 impactPool = ds.getUint(impactKey);
        int256 impactDelta = -x.priceImpactAmount;
        if (impactDelta < 0 && uint256(-impactDelta) > impactPool) impactDelta = -int256(impactPool);
        ds.applyDeltaToUint(impactKey, impactDelta, "impact pool");
    }

    /// MIN_POSITION_SIZE_USD, and the collateral (with a loss at the current price) above MIN_COLLATERAL_USD
    /// and the size × MIN_COLLATERAL_FACTOR (GMX's willPositionCollateralBeSufficient, without liquidations).
    function _validatePosition(Exec memory x) private view {
        GmxTypes.PositionNumbers memory n = x.position.numbers;
        address market = x.market.marketToken;
        uint256 minSize = dataStore.getUint(GmxKeys.MIN_POSITION_SIZE_USD);
        if (n.sizeInUsd < minSize) revert GmxErrors.MinPositionSize(n.sizeInUsd, minSize);
        int256 pnl = GmxMath.positionPnlUsd(n.sizeInUsd, n.sizeInTokens, GmxMath.pnlPrice(x.prices, x.order.flags.isLong), x.order.flags.isLong);
        int256 remaining = int256(n.collateralAmount * x.collateralPrice.min) + (pnl < 0 ? pnl : int256(0));
        uint256 minUsd = dataStore.getUint(GmxKeys.MIN_COLLATERAL_USD);
        uint256 forLeverage = GmxMath.applyFactor(n.sizeInUsd, dataStore.getUint(GmxKeys.marketOnly(GmxKeys.MIN_COLLATERAL_FACTOR, market)));
        if (remaining < int256(minUsd) || remaining < int256(forLeverage)) revert GmxErrors.InsufficientCollateralUsd(remaining);
    }

    function _validateReserveAndOpenInterest(Exec memory x) private view {
        IGmxDataStore ds = dataStore;
        bool isLong = x.order.flags.isLong;
        address market = x.market.marketToken;
        uint256 reserved = GmxMath.reservedUsd(ds, x.market, x.prices, isLong);
        uint256 maxReserved = GmxMath.applyFactor(GmxMath.poolUsd(ds, x.market, x.prices, isLong), ds.getUint(GmxKeys.marketBool(GmxKeys.RESERVE_FACTOR, market, isLong)));
        if (reserved > maxReserved) revert GmxErrors.InsufficientReserve(reserved, maxReserved);
        uint256 oi = GmxMath.openInterest(ds, x.market, isLong);
        uint256 maxOi = ds.getUint(GmxKeys.marketBool(GmxKeys.MAX_OPEN_INTEREST, market, isLong));
        if (oi > maxOi) revert GmxErrors.MaxOpenInterestExceeded(oi, maxOi);
    }

    function _topic(address account) private pure returns (bytes32) {
        return bytes32(uint256(uint160(account)));
    }

    /// PositionEventUtils.emitPositionIncrease/emitPositionDecrease's main items.
    function _emitPositionEvent(Exec memory x, string memory name, uint256 sizeDeltaUsd) private {
        GmxTypes.PositionNumbers memory n = x.position.numbers;
        GmxEvents.EventLogData memory d = GmxEvents.init(3, 14, 4, 1, 2);
        GmxEvents.addr(d, 0, "account", x.order.addresses.account);
        GmxEvents.addr(d, 1, "market", x.market.marketToken);
        GmxEvents.addr(d, 2, "collateralToken", x.order.addresses.initialCollateralToken);
        GmxEvents.uintItem(d, 0, "sizeInUsd", n.sizeInUsd);
        GmxEvents.uintItem(d, 1, "sizeInTokens", n.sizeInTokens);
        GmxEvents.uintItem(d, 2, "collateralAmount", n.collateralAmount);
        GmxEvents.uintItem(d, 3, "borrowingFactor", n.borrowingFactor);
        GmxEvents.uintItem(d, 4, "fundingFeeAmountPerSize", n.fundingFeeAmountPerSize);
        GmxEvents.uintItem(d, 5, "executionPrice", x.executionPrice);
        GmxEvents.uintItem(d, 6, "indexTokenPrice.max", x.prices.indexTokenPrice.max);
        GmxEvents.uintItem(d, 7, "indexTokenPrice.min", x.prices.indexTokenPrice.min);
        GmxEvents.uintItem(d, 8, "collateralTokenPrice.max", x.collateralPrice.max);
        GmxEvents.uintItem(d, 9, "collateralTokenPrice.min", x.collateralPrice.min);
        GmxEvents.uintItem(d, 10, "sizeDeltaUsd", sizeDeltaUsd);
        GmxEvents.uintItem(d, 11, "sizeDeltaInTokens", x.sizeDeltaInTokens);
        GmxEvents.uintItem(d, 12, "orderType", x.order.numbers.orderType);
        GmxEvents.uintItem(d, 13, "outputAmount", x.outputAmount);
        GmxEvents.intItem(d, 0, "collateralDeltaAmount", x.collateralDeltaAmount);
        GmxEvents.intItem(d, 1, "priceImpactUsd", x.priceImpactUsd);
        GmxEvents.intItem(d, 2, "priceImpactAmount", x.priceImpactAmount);
        GmxEvents.intItem(d, 3, "basePnlUsd", x.basePnlUsd);
        GmxEvents.boolItem(d, 0, "isLong", x.order.flags.isLong);
        GmxEvents.b32(d, 0, "orderKey", x.key);
        GmxEvents.b32(d, 1, "positionKey", x.positionKey);
        eventEmitter.emitEventLog1(name, _topic(x.order.addresses.account), d);
    }
}
