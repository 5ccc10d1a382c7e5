// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {
    GmxErrors, GmxEvents, GmxFields, GmxKeys, GmxMath, GmxStore, GmxTypes, IGmxBank, IGmxDataStore, IGmxEventEmitter, IGmxRoleStore,
    IGmxWeth
} from "DevnetGmxCommon.sol";

interface IDevnetGmxRouter {
    function pluginTransfer(address token, address account, address receiver, uint256 amount) external;
}

interface IDevnetGmxOrderHandler {
    struct SimulatePricesParams {
        address[] primaryTokens;
        GmxTypes.PriceProps[] primaryPrices;
        uint256 minTimestamp;
        uint256 maxTimestamp;
    }

    function simulateExecuteOrder(bytes32 key, SimulatePricesParams memory params) external;
    function cancelOrder(bytes32 key, string memory reason) external;
}

/// @notice GMX v2's ExchangeRouter for the devnet, with the real ABI for what a trading client sends:
/// `multicall` (delegatecalls to itself, bubbling the revert data), `sendWnt`, `sendTokens` (through the Router,
/// the spender users approve), `createOrder` for market and limit increase/decrease orders (GMX's validation and custom
/// errors, the execution fee and collateral taken as what the OrderVault received), `cancelOrder` by the order's
/// account, `updateOrder` of a limit order, and `simulateExecuteLatestOrder` (executes the order last created at
/// the given prices, then reverts EndOfOracleSimulation), `claimFundingFees`. Deposits and withdrawals: its fallback
/// delegatecalls the liquidity facet (DevnetGmxLiquidityRouter), which answers NotOnTheDevnet for anything else.
contract DevnetGmxExchangeRouter {
    struct CreateOrderParamsAddresses {
        address receiver;
        address cancellationReceiver;
        address callbackContract;
        address uiFeeReceiver;
        address market;
        address initialCollateralToken;
        address[] swapPath;
    }

    struct CreateOrderParamsNumbers {
        uint256 sizeDeltaUsd;
        uint256 initialCollateralDeltaAmount;
        uint256 triggerPrice;
        uint256 acceptablePrice;
        uint256 executionFee;
        uint256 callbackGasLimit;
        uint256 minOutputAmount;
        uint256 validFromTime;
    }

    struct CreateOrderParams {
        CreateOrderParamsAddresses addresses;
        CreateOrderParamsNumbers numbers;
        uint8 orderType;
        uint8 decreasePositionSwapType;
        bool isLong;
        bool shouldUnwrapNativeToken;
        bool autoCancel;
        bytes32 referralCode;
        bytes32[] dataList;
    }

    IDevnetGmxRouter public immutable router;
    IGmxDataStore public immutable dataStore;
    IGmxRoleStore public immutable roleStore;
    IGmxEventEmitter public immutable eventEmitter;
    IDevnetGmxOrderHandler public immutable orderHandler;
    IGmxBank public immutable orderVault;
    /// Deposits and withdrawals (this contract is at the code size limit): its code runs as this contract's.
    address private immutable liquidityFacet;

    error NotOnTheDevnet(string what);
    error TokenTransferError(address token, address receiver, uint256 amount);
    error Unauthorized(address msgSender, string role);

    constructor(
        IDevnetGmxRouter router_,
        IGmxRoleStore roleStore_,
        IGmxDataStore dataStore_,
        IGmxEventEmitter eventEmitter_,
        IDevnetGmxOrderHandler orderHandler_,
        IGmxBank orderVault_,
        address liquidityFacet_
    ) {
        router = router_;
        roleStore = roleStore_;
        dataStore = dataStore_;
        eventEmitter = eventEmitter_;
        orderHandler = orderHandler_;
        orderVault = orderVault_;
        liquidityFacet = liquidityFacet_;
    }

    /// Deposits, withdrawals and the rest of GMX's ExchangeRouter: the liquidity facet's code, run as this contract's
    /// (msg.sender and msg.value kept), its result or revert data passed on as they are.
    fallback() external payable {
        address facet = liquidityFacet;
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), facet, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            if iszero(ok) { revert(0, returndatasize()) }
            return(0, returndatasize())
        }
    }

    function multicall(bytes[] calldata data) external payable returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; i++) {
            (bool ok, bytes memory result) = address(this).delegatecall(data[i]);
            if (!ok) {
                assembly {
                    revert(add(result, 32), mload(result))
                }
            }
            results[i] = result;
        }
    }

    /// Wraps `amount` of the native coin sent and pays the WNT to `receiver` (the OrderVault: the execution fee).
    function sendWnt(address receiver, uint256 amount) external payable {
        IGmxWeth wnt = IGmxWeth(dataStore.getAddress(GmxKeys.WNT));
        wnt.deposit{value: amount}();
        if (!wnt.transfer(receiver, amount)) revert TokenTransferError(address(wnt), receiver, amount);
    }

    /// Native coin sent on as is.
    function sendNativeToken(address receiver, uint256 amount) external payable {
        (bool ok,) = receiver.call{value: amount}("");
        if (!ok) revert TokenTransferError(address(0), receiver, amount);
    }

    /// Pulls `amount` of `token` from the caller (who approved the Router) to `receiver`.
    function sendTokens(address token, address receiver, uint256 amount) external payable {
        router.pluginTransfer(token, msg.sender, receiver, amount);
    }

    function createOrder(CreateOrderParams calldata params) external payable returns (bytes32) {
        return _createOrder(msg.sender, params);
    }

    function cancelOrder(bytes32 key) external payable {
        if (!GmxStore.orderExists(dataStore, key)) revert GmxErrors.OrderNotFound(key);
        address account = dataStore.getAddress(GmxKeys.field(key, GmxFields.ACCOUNT));
        if (account != msg.sender) revert Unauthorized(msg.sender, "account for cancelOrder");
        uint256 updatedAt = dataStore.getUint(GmxKeys.field(key, GmxFields.UPDATED_AT_TIME));
        uint256 expiration = dataStore.getUint(GmxKeys.REQUEST_EXPIRATION_TIME);
        uint8 orderType = uint8(dataStore.getUint(GmxKeys.field(key, GmxFields.ORDER_TYPE)));
        bool isMarket = orderType == GmxTypes.MARKET_INCREASE || orderType == GmxTypes.MARKET_DECREASE;
        if (isMarket && block.timestamp < updatedAt + expiration) {
            revert GmxErrors.RequestNotYetCancellable(block.timestamp - updatedAt, expiration, "Order");
        }
        orderHandler.cancelOrder(key, "USER_INITIATED_CANCEL");
    }

    function simulateExecuteLatestOrder(IDevnetGmxOrderHandler.SimulatePricesParams memory simulatedOracleParams) external payable {
        bytes32 key = keccak256(abi.encode(address(dataStore), dataStore.getUint(GmxKeys.NONCE)));
        orderHandler.simulateExecuteOrder(key, simulatedOracleParams);
    }

    /// A limit order's account changes its numbers (WNT sent to the OrderVault first adds to the fee): it is
    /// unfrozen and its updatedAtTime moves (OrderUpdated).
    function updateOrder(
        bytes32 key,
        uint256 sizeDeltaUsd,
        uint256 acceptablePrice,
        uint256 triggerPrice,
        uint256 minOutputAmount,
        uint256 validFromTime,
        bool autoCancel
    ) external payable {
        IGmxDataStore ds = dataStore;
        address account = _updatable(ds, key);
        ds.setUint(GmxKeys.field(key, GmxFields.SIZE_DELTA_USD), sizeDeltaUsd);
        ds.setUint(GmxKeys.field(key, GmxFields.ACCEPTABLE_PRICE), acceptablePrice);
        ds.setUint(GmxKeys.field(key, GmxFields.TRIGGER_PRICE), triggerPrice);
        ds.setUint(GmxKeys.field(key, GmxFields.MIN_OUTPUT_AMOUNT), minOutputAmount);
        ds.setUint(GmxKeys.field(key, GmxFields.VALID_FROM_TIME), validFromTime);
        ds.setUint(GmxKeys.field(key, GmxFields.UPDATED_AT_TIME), block.timestamp);
        ds.setBool(GmxKeys.field(key, GmxFields.AUTO_CANCEL), autoCancel);
        ds.setBool(GmxKeys.field(key, GmxFields.IS_FROZEN), false);
        _emitOrderUpdated(ds, key, account);
    }

    /// The order's account, once it is the caller's limit order; the fee topped up by what the vault received.
    function _updatable(IGmxDataStore ds, bytes32 key) private returns (address account) {
        if (!GmxStore.orderExists(ds, key)) revert GmxErrors.OrderNotFound(key);
        account = ds.getAddress(GmxKeys.field(key, GmxFields.ACCOUNT));
        if (account != msg.sender) revert Unauthorized(msg.sender, "account for updateOrder");
        uint256 orderType = ds.getUint(GmxKeys.field(key, GmxFields.ORDER_TYPE));
        if (orderType != GmxTypes.LIMIT_INCREASE && orderType != GmxTypes.LIMIT_DECREASE) revert GmxErrors.OrderNotUpdatable(orderType);
        uint256 fee = ds.getUint(GmxKeys.field(key, GmxFields.EXECUTION_FEE)) + orderVault.recordTransferIn(ds.getAddress(GmxKeys.WNT));
        _validateExecutionFee(ds, orderType == GmxTypes.LIMIT_INCREASE, ds.getUint(GmxKeys.field(key, GmxFields.CALLBACK_GAS_LIMIT)), fee);
        ds.setUint(GmxKeys.field(key, GmxFields.EXECUTION_FEE), fee);
    }

    /// OrderEventUtils.emitOrderUpdated's items, read back from the store.
    function _emitOrderUpdated(IGmxDataStore ds, bytes32 key, address account) private {
        GmxEvents.EventLogData memory d = GmxEvents.init(1, 6, 0, 1, 1);
        GmxEvents.b32(d, 0, "key", key);
        GmxEvents.addr(d, 0, "account", account);
        GmxEvents.uintItem(d, 0, "sizeDeltaUsd", ds.getUint(GmxKeys.field(key, GmxFields.SIZE_DELTA_USD)));
        GmxEvents.uintItem(d, 1, "acceptablePrice", ds.getUint(GmxKeys.field(key, GmxFields.ACCEPTABLE_PRICE)));
        GmxEvents.uintItem(d, 2, "triggerPrice", ds.getUint(GmxKeys.field(key, GmxFields.TRIGGER_PRICE)));
        GmxEvents.uintItem(d, 3, "minOutputAmount", ds.getUint(GmxKeys.field(key, GmxFields.MIN_OUTPUT_AMOUNT)));
        GmxEvents.uintItem(d, 4, "updatedAtTime", block.timestamp);
        GmxEvents.uintItem(d, 5, "validFromTime", ds.getUint(GmxKeys.field(key, GmxFields.VALID_FROM_TIME)));
        GmxEvents.boolItem(d, 0, "autoCancel", ds.getBool(GmxKeys.field(key, GmxFields.AUTO_CANCEL)));
        eventEmitter.emitEventLog2("OrderUpdated", key, bytes32(uint256(uint160(account))), d);
    }

    /// The caller's claimable funding (CLAIMABLE_FUNDING_AMOUNT, credited when its positions change) of each
    /// (market, token) pair, paid from the market to `receiver` (FundingFeesClaimed).
    function claimFundingFees(address[] memory markets, address[] memory tokens, address receiver) external payable returns (uint256[] memory amounts) {
        if (markets.length != tokens.length) revert GmxErrors.InvalidClaimFundingFeesInput(markets.length, tokens.length);
        if (receiver == address(0)) revert GmxErrors.EmptyReceiver();
        amounts = new uint256[](markets.length);
        for (uint256 i = 0; i < markets.length; i++) {
            GmxStore.getEnabledMarket(dataStore, markets[i]);
            bytes32 key = GmxKeys.claimableFundingAmount(markets[i], tokens[i], msg.sender);
            amounts[i] = dataStore.getUint(key);
            dataStore.setUint(key, 0);
            IGmxBank(markets[i]).transferOut(tokens[i], receiver, amounts[i]);
            GmxEvents.EventLogData memory d = GmxEvents.init(4, 1, 0, 0, 0);
            GmxEvents.addr(d, 0, "market", markets[i]);
            GmxEvents.addr(d, 1, "token", tokens[i]);
            GmxEvents.addr(d, 2, "account", msg.sender);
            GmxEvents.addr(d, 3, "receiver", receiver);
            GmxEvents.uintItem(d, 0, "amount", amounts[i]);
            eventEmitter.emitEventLog1("FundingFeesClaimed", bytes32(uint256(uint160(msg.sender))), d);
        }
    }

    function _createOrder(address account, CreateOrderParams calldata params) private returns (bytes32 key) {
        IGmxDataStore ds = dataStore;
        address wnt = ds.getAddress(GmxKeys.WNT);
        uint8 t = params.orderType;
        bool isIncrease = t == GmxTypes.MARKET_INCREASE || t == GmxTypes.LIMIT_INCREASE;
        if (!isIncrease && t != GmxTypes.MARKET_DECREASE && t != GmxTypes.LIMIT_DECREASE) revert GmxErrors.UnsupportedOrderType(t);

        GmxTypes.OrderProps memory o;
        o.numbers.executionFee = params.numbers.executionFee;
        o.numbers.initialCollateralDeltaAmount = params.numbers.initialCollateralDeltaAmount;
        bool separateFee = true;
        if (isIncrease) {
            // The collateral is what the vault received; WNT collateral carries the execution fee too.
            o.numbers.initialCollateralDeltaAmount = orderVault.recordTransferIn(params.addresses.initialCollateralToken);
            if (params.addresses.initialCollateralToken == wnt) {
                if (o.numbers.initialCollateralDeltaAmount < params.numbers.executionFee) {
                    revert GmxErrors.InsufficientWntAmountForExecutionFee(o.numbers.initialCollateralDeltaAmount, params.numbers.executionFee);
                }
                o.numbers.initialCollateralDeltaAmount -= params.numbers.executionFee;
                separateFee = false;
            }
        }
        if (separateFee) {
            uint256 wntAmount = orderVault.recordTransferIn(wnt);
            if (wntAmount < params.numbers.executionFee) revert GmxErrors.InsufficientWntAmountForExecutionFee(wntAmount, params.numbers.executionFee);
            o.numbers.executionFee = wntAmount;
        }

        GmxTypes.MarketProps memory market = GmxStore.getEnabledMarket(ds, params.addresses.market);
        address collateral = params.addresses.initialCollateralToken;
        if (collateral != market.longToken && collateral != market.shortToken) {
            revert GmxErrors.InvalidCollateralTokenForMarket(market.marketToken, collateral);
        }
        if (params.addresses.swapPath.length > 0) revert GmxErrors.MaxSwapPathLengthExceeded(params.addresses.swapPath.length, 0);
        if (params.addresses.receiver == address(0)) revert GmxErrors.EmptyReceiver();
        _validateExecutionFee(ds, isIncrease, params.numbers.callbackGasLimit, o.numbers.executionFee);

        o.addresses.account = account;
        o.addresses.receiver = params.addresses.receiver;
        o.addresses.cancellationReceiver = params.addresses.cancellationReceiver;
        o.addresses.callbackContract = params.addresses.callbackContract;
        o.addresses.uiFeeReceiver = params.addresses.uiFeeReceiver;
        o.addresses.market = market.marketToken;
        o.addresses.initialCollateralToken = collateral;
        o.addresses.swapPath = new address[](0);
        o.numbers.orderType = params.orderType;
        o.numbers.decreasePositionSwapType = params.decreasePositionSwapType;
        o.numbers.sizeDeltaUsd = params.numbers.sizeDeltaUsd;
        o.numbers.triggerPrice = params.numbers.triggerPrice;
        o.numbers.acceptablePrice = params.numbers.acceptablePrice;
        o.numbers.callbackGasLimit = params.numbers.callbackGasLimit;
        o.numbers.minOutputAmount = params.numbers.minOutputAmount;
        o.numbers.updatedAtTime = block.timestamp;
        o.numbers.validFromTime = params.numbers.validFromTime;
        o.flags.isLong = params.isLong;
        o.flags.shouldUnwrapNativeToken = params.shouldUnwrapNativeToken;
        o.flags.autoCancel = params.autoCancel;
        o._dataList = params.dataList;

        // NonceUtils.getNextKey
        uint256 nonce = ds.incrementUint(GmxKeys.NONCE, 1);
        key = keccak256(abi.encode(address(ds), nonce));
        GmxStore.addOrder(ds, key, o);
        _emitOrderCreated(key, o);
    }

    /// GasUtils.validateExecutionFee: (base + per-oracle-price × 3 + order gas limit × multiplier) × tx.gasprice.
    function _validateExecutionFee(IGmxDataStore ds, bool isIncrease, uint256 callbackGasLimit, uint256 executionFee) private view {
        uint256 estimated = ds.getUint(isIncrease ? GmxKeys.INCREASE_ORDER_GAS_LIMIT : GmxKeys.DECREASE_ORDER_GAS_LIMIT) + callbackGasLimit;
        uint256 gasLimit = ds.getUint(GmxKeys.ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1) + ds.getUint(GmxKeys.ESTIMATED_GAS_FEE_PER_ORACLE_PRICE) * 3
            + GmxMath.applyFactor(estimated, ds.getUint(GmxKeys.ESTIMATED_GAS_FEE_MULTIPLIER_FACTOR));
        uint256 minExecutionFee = gasLimit * tx.gasprice;
        if (executionFee < minExecutionFee) revert GmxErrors.InsufficientExecutionFee(minExecutionFee, executionFee);
    }

    /// OrderEventUtils.emitOrderCreated's items.
    function _emitOrderCreated(bytes32 key, GmxTypes.OrderProps memory o) private {
        GmxEvents.EventLogData memory d = GmxEvents.init(7, 12, 0, 4, 1);
        GmxEvents.addr(d, 0, "account", o.addresses.account);
        GmxEvents.addr(d, 1, "receiver", o.addresses.receiver);
        GmxEvents.addr(d, 2, "cancellationReceiver", o.addresses.cancellationReceiver);
        GmxEvents.addr(d, 3, "callbackContract", o.addresses.callbackContract);
        GmxEvents.addr(d, 4, "uiFeeReceiver", o.addresses.uiFeeReceiver);
        GmxEvents.addr(d, 5, "market", o.addresses.market);
        GmxEvents.addr(d, 6, "initialCollateralToken", o.addresses.initialCollateralToken);
        d.addressItems.arrayItems = new GmxEvents.AddressArrayKeyValue[](1);
        d.addressItems.arrayItems[0] = GmxEvents.AddressArrayKeyValue("swapPath", o.addresses.swapPath);
        GmxEvents.uintItem(d, 0, "orderType", o.numbers.orderType);
        GmxEvents.uintItem(d, 1, "decreasePositionSwapType", o.numbers.decreasePositionSwapType);
        GmxEvents.uintItem(d, 2, "sizeDeltaUsd", o.numbers.sizeDeltaUsd);
        GmxEvents.uintItem(d, 3, "initialCollateralDeltaAmount", o.numbers.initialCollateralDeltaAmount);
        GmxEvents.uintItem(d, 4, "triggerPrice", o.numbers.triggerPrice);
        GmxEvents.uintItem(d, 5, "acceptablePrice", o.numbers.acceptablePrice);
        GmxEvents.uintItem(d, 6, "executionFee", o.numbers.executionFee);
        GmxEvents.uintItem(d, 7, "callbackGasLimit", o.numbers.callbackGasLimit);
        GmxEvents.uintItem(d, 8, "minOutputAmount", o.numbers.minOutputAmount);
        GmxEvents.uintItem(d, 9, "updatedAtTime", o.numbers.updatedAtTime);
        GmxEvents.uintItem(d, 10, "validFromTime", o.numbers.validFromTime);
        GmxEvents.uintItem(d, 11, "srcChainId", o.numbers.srcChainId);
        GmxEvents.boolItem(d, 0, "isLong", o.flags.isLong);
        GmxEvents.boolItem(d, 1, "shouldUnwrapNativeToken", o.flags.shouldUnwrapNativeToken);
        GmxEvents.boolItem(d, 2, "isFrozen", o.flags.isFrozen);
        GmxEvents.boolItem(d, 3, "autoCancel", o.flags.autoCancel);
        GmxEvents.b32(d, 0, "key", key);
        d.bytes32Items.arrayItems = new GmxEvents.Bytes32ArrayKeyValue[](1);
        d.bytes32Items.arrayItems[0] = GmxEvents.Bytes32ArrayKeyValue("dataList", o._dataList);
        eventEmitter.emitEventLog2("OrderCreated", key, bytes32(uint256(uint160(o.addresses.account))), d);
    }
}
