// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {
    GmxErrors, GmxEvents, GmxFields, GmxKeys, GmxMath, GmxRoleModule, GmxStore, GmxTypes, IGmxBank, IGmxDataStore, IGmxEventEmitter,
    IGmxRoleStore
} from "DevnetGmxCommon.sol";

interface IDevnetGmxPositionHandler {
    function execute(bytes32 key, GmxTypes.OrderProps memory order, GmxTypes.MarketPrices memory prices) external;
}

/// @notice GMX v2's OrderHandler for the devnet: ORDER_KEEPERs execute market increase/decrease orders at the
/// prices in OracleUtils.SetPricesParams (providers[i] must be the token's configured provider, the devnet's
/// price feed; data[i] = abi.encode(min, max, timestamp), unsigned). Execution follows GMX: funding and borrowing
/// are brought up to date, the price impact moves the execution price, the acceptable price is checked, the
/// position fee, borrowing and funding fees are charged; an order that fails is cancelled with the error's name
/// and data (OrderCancelled), and the keeper is paid gas × gas price from the execution fee, the rest refunded.
contract DevnetGmxOrderHandler is GmxRoleModule {
    struct SetPricesParams {
        address[] tokens;
        address[] providers;
        bytes[] data;
    }

    struct SimulatePricesParams {
        address[] primaryTokens;
        GmxTypes.PriceProps[] primaryPrices;
        uint256 minTimestamp;
        uint256 maxTimestamp;
    }

    IGmxDataStore public immutable dataStore;
    IGmxEventEmitter public immutable eventEmitter;
    IGmxBank public immutable orderVault;
    IDevnetGmxPositionHandler public immutable positionHandler;

    error OnlySelf();

    constructor(
        IGmxRoleStore roleStore_,
        IGmxDataStore dataStore_,
        IGmxEventEmitter eventEmitter_,
        IGmxBank orderVault_,
        IDevnetGmxPositionHandler positionHandler_
    ) GmxRoleModule(roleStore_) {
        dataStore = dataStore_;
        eventEmitter = eventEmitter_;
        orderVault = orderVault_;
        positionHandler = positionHandler_;
    }

    function executeOrder(bytes32 key, SetPricesParams calldata oracleParams) external onlyRole(GmxKeys.ORDER_KEEPER, "ORDER_KEEPER") {
        uint256 startingGas = gasleft();
        if (!GmxStore.orderExists(dataStore, key)) revert GmxErrors.OrderNotFound(key);
        GmxTypes.OrderProps memory order = GmxStore.getOrder(dataStore, key);
        // GMX leaves frozen orders to its FROZEN_ORDER_KEEPERs; the devnet has none: updateOrder unfreezes.
        if (order.flags.isFrozen) revert GmxErrors.InvalidKeeperForFrozenOrder(msg.sender);
        GmxTypes.MarketPrices memory prices = _oraclePrices(order, oracleParams);
        // Not reached yet: the whole call reverts (the order waits), as GMX's BaseOrderUtils.validateOrderTriggerPrice.
        _validateTrigger(order, prices.indexTokenPrice);
        try this.executeOrderInternal(key, prices) {}
        catch (bytes memory reasonBytes) {
            if (_isLimit(order.numbers.orderType)) _freeze(key, order, GmxErrors.nameOf(reasonBytes), reasonBytes);
            else _cancel(key, order, GmxErrors.nameOf(reasonBytes), reasonBytes);
        }
        _payExecutionFee(order, startingGas, msg.sender);
    }

    function _isLimit(uint8 orderType) private pure returns (bool) {
        return orderType == GmxTypes.LIMIT_INCREASE || orderType == GmxTypes.LIMIT_DECREASE;
    }

    /// A limit increase fills at or better than its trigger (long: price ≤ trigger), a limit decrease at or past it.
    function _validateTrigger(GmxTypes.OrderProps memory order, GmxTypes.PriceProps memory price) private pure {
        uint8 t = order.numbers.orderType;
        if (!_isLimit(t)) return;
        uint256 trigger = order.numbers.triggerPrice;
        bool below = (t == GmxTypes.LIMIT_INCREASE) == order.flags.isLong;
        if (below ? price.max > trigger : price.min < trigger) revert GmxErrors.InvalidOrderPrices(price.min, price.max, trigger, t);
    }

    function executeOrderInternal(bytes32 key, GmxTypes.MarketPrices memory prices) external {
        if (msg.sender != address(this)) revert OnlySelf();
        _execute(key, prices);
    }

    /// The order executed at the given prices, then EndOfOracleSimulation (or the execution's own error).
    function simulateExecuteOrder(bytes32 key, SimulatePricesParams memory params) external onlyRole(GmxKeys.CONTROLLER, "CONTROLLER") {
        if (!GmxStore.orderExists(dataStore, key)) revert GmxErrors.OrderNotFound(key);
        GmxTypes.MarketProps memory m = GmxStore.getMarket(dataStore, dataStore.getAddress(GmxKeys.field(key, GmxFields.MARKET)));
        GmxTypes.MarketPrices memory prices;
        prices.indexTokenPrice = _simulatedPrice(params, m.indexToken);
        prices.longTokenPrice = _simulatedPrice(params, m.longToken);
        prices.shortTokenPrice = _simulatedPrice(params, m.shortToken);
        _validateTrigger(GmxStore.getOrder(dataStore, key), prices.indexTokenPrice);
        _execute(key, prices);
        revert GmxErrors.EndOfOracleSimulation();
    }

    /// A cancellation the ExchangeRouter asks for (the account's own): the collateral and the whole fee back.
    function cancelOrder(bytes32 key, string memory reason) external onlyRole(GmxKeys.CONTROLLER, "CONTROLLER") {
        if (!GmxStore.orderExists(dataStore, key)) revert GmxErrors.OrderNotFound(key);
        GmxTypes.OrderProps memory order = GmxStore.getOrder(dataStore, key);
        _cancel(key, order, reason, "");
        orderVault.transferOutNativeToken(order.addresses.receiver, order.numbers.executionFee);
    }

    // ---- prices ----

    function _simulatedPrice(SimulatePricesParams memory params, address token) private pure returns (GmxTypes.PriceProps memory) {
        for (uint256 i = 0; i < params.primaryTokens.length; i++) {
            if (params.primaryTokens[i] == token) return params.primaryPrices[i];
        }
        revert GmxErrors.EmptyPrimaryPrice(token);
    }

    function _oraclePrices(GmxTypes.OrderProps memory order, SetPricesParams calldata p) private view returns (GmxTypes.MarketPrices memory prices) {
        GmxTypes.MarketProps memory m = GmxStore.getMarket(dataStore, order.addresses.market);
        prices.indexTokenPrice = _oraclePrice(p, m.indexToken, order.numbers.updatedAtTime);
        prices.longTokenPrice = _oraclePrice(p, m.longToken, order.numbers.updatedAtTime);
        prices.shortTokenPrice = _oraclePrice(p, m.shortToken, order.numbers.updatedAtTime);
    }

    function _oraclePrice(SetPricesParams calldata p, address token, uint256 notBefore) private view returns (GmxTypes.PriceProps memory price) {
        for (uint256 i = 0; i < p.tokens.length; i++) {
            if (p.tokens[i] != token) continue;
            address expected = dataStore.getAddress(GmxKeys.oracleProviderForToken(token));
            if (p.providers[i] != expected) revert GmxErrors.InvalidOracleProviderForToken(p.providers[i], expected);
            uint256 timestamp;
            (price.min, price.max, timestamp) = abi.decode(p.data[i], (uint256, uint256, uint256));
            if (timestamp < notBefore) revert GmxErrors.OracleTimestampsAreSmallerThanRequired(timestamp, notBefore);
            if (price.min == 0 || price.max < price.min) revert GmxErrors.EmptyPrimaryPrice(token);
            return price;
        }
        revert GmxErrors.EmptyPrimaryPrice(token);
    }

    // ---- execution ----

    function _execute(bytes32 key, GmxTypes.MarketPrices memory prices) private {
        GmxTypes.OrderProps memory order = GmxStore.getOrder(dataStore, key);
        _updateMarketState(GmxStore.getEnabledMarket(dataStore, order.addresses.market), prices);
        positionHandler.execute(key, order, prices);
        GmxStore.removeOrder(dataStore, key, order.addresses.account);
        GmxEvents.EventLogData memory d = GmxEvents.init(1, 1, 0, 0, 1);
        GmxEvents.b32(d, 0, "key", key);
        GmxEvents.addr(d, 0, "account", order.addresses.account);
        GmxEvents.uintItem(d, 0, "secondaryOrderType", 0);
        eventEmitter.emitEventLog2("OrderExecuted", key, _topic(order.addresses.account), d);
    }

    /// Borrowing and funding brought up to date (MarketUtils.updateFundingState / updateCumulativeBorrowingFactor).
    function _updateMarketState(GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory p) private {
        IGmxDataStore ds = dataStore;
        for (uint256 s = 0; s < 2; s++) {
            bool isLong = s == 0;
            ds.setUint(GmxKeys.marketBool(GmxKeys.CUMULATIVE_BORROWING_FACTOR, m.marketToken, isLong), GmxMath.nextCumulativeBorrowingFactor(ds, m, p, isLong));
            ds.setUint(GmxKeys.marketBool(GmxKeys.CUMULATIVE_BORROWING_FACTOR_UPDATED_AT, m.marketToken, isLong), block.timestamp);
        }
        GmxMath.Funding memory f = GmxMath.nextFunding(ds, m, p);
        address[2] memory tokens = [m.longToken, m.shortToken];
        for (uint256 s = 0; s < 2; s++) {
            for (uint256 t = 0; t < 2; t++) {
                if (f.feePerSizeDelta[s][t] > 0) {
                    ds.incrementUint(GmxKeys.marketTokenBool(GmxKeys.FUNDING_FEE_AMOUNT_PER_SIZE, m.marketToken, tokens[t], s == 0), f.feePerSizeDelta[s][t]);
                }
                if (f.claimablePerSizeDelta[s][t] > 0) {
                    ds.incrementUint(
                        GmxKeys.marketTokenBool(GmxKeys.CLAIMABLE_FUNDING_AMOUNT_PER_SIZE, m.marketToken, tokens[t], s == 0), f.claimablePerSizeDelta[s][t]
                    );
                }
            }
        }
        ds.setUint(GmxKeys.marketOnly(GmxKeys.FUNDING_UPDATED_AT, m.marketToken), block.timestamp);
    }

    // ---- cancellation and the execution fee ----

    /// GMX's cancellation: the increase order's collateral back to the cancellation receiver (else the account),
    /// the order removed, OrderCancelled with the reason and its bytes.
    function _cancel(bytes32 key, GmxTypes.OrderProps memory order, string memory reason, bytes memory reasonBytes) private {
        uint8 t = order.numbers.orderType;
        if (t == GmxTypes.MARKET_INCREASE || t == GmxTypes.LIMIT_INCREASE) {
            address to = order.addresses.cancellationReceiver != address(0) ? order.addresses.cancellationReceiver : order.addresses.account;
            orderVault.transferOut(order.addresses.initialCollateralToken, to, order.numbers.initialCollateralDeltaAmount);
        }
        GmxStore.removeOrder(dataStore, key, order.addresses.account);
        _emitOrderEnded("OrderCancelled", key, order.addresses.account, reason, reasonBytes);
    }

    /// A limit order that failed for another reason than its trigger stays, frozen (OrderFrozen), its execution
    /// fee spent on this attempt; the account's updateOrder unfreezes it (with a new fee).
    function _freeze(bytes32 key, GmxTypes.OrderProps memory order, string memory reason, bytes memory reasonBytes) private {
        dataStore.setBool(GmxKeys.field(key, GmxFields.IS_FROZEN), true);
        dataStore.setUint(GmxKeys.field(key, GmxFields.EXECUTION_FEE), 0);
        _emitOrderEnded("OrderFrozen", key, order.addresses.account, reason, reasonBytes);
    }

    function _emitOrderEnded(string memory name, bytes32 key, address account, string memory reason, bytes memory reasonBytes) private {
        GmxEvents.EventLogData memory d = GmxEvents.init(1, 0, 0, 0, 1);
        GmxEvents.b32(d, 0, "key", key);
        GmxEvents.addr(d, 0, "account", account);
        d.stringItems.items = new GmxEvents.StringKeyValue[](1);
        d.stringItems.items[0] = GmxEvents.StringKeyValue("reason", reason);
        d.bytesItems.items = new GmxEvents.BytesKeyValue[](1);
        d.bytesItems.items[0] = GmxEvents.BytesKeyValue("reasonBytes", reasonBytes);
        eventEmitter.emitEventLog2(name, key, _topic(account), d);
    }

    /// GasUtils.payExecutionFee: the keeper gets (EXECUTION_GAS_FEE_BASE_AMOUNT_V2_1 + gas used × the
    /// multiplier) × tx.gasprice, at most the fee; the receiver gets the rest, both as native coin.
    function _payExecutionFee(GmxTypes.OrderProps memory order, uint256 startingGas, address keeper) private {
        uint256 gasUsed = startingGas - gasleft();
        uint256 multiplier = dataStore.getUint(GmxKeys.EXECUTION_GAS_FEE_MULTIPLIER_FACTOR);
        uint256 keeperGas = dataStore.getUint(GmxKeys.EXECUTION_GAS_FEE_BASE_AMOUNT_V2_1) + (multiplier == 0 ? gasUsed : GmxMath.applyFactor(gasUsed, multiplier));
        uint256 keeperFee = keeperGas * tx.gasprice;
        if (keeperFee > order.numbers.executionFee) keeperFee = order.numbers.executionFee;
        orderVault.transferOutNativeToken(keeper, keeperFee);
        orderVault.transferOutNativeToken(order.addresses.receiver, order.numbers.executionFee - keeperFee);
    }

    // ---- events ----

    function _topic(address account) private pure returns (bytes32) {
        return bytes32(uint256(uint160(account)));
    }
}
