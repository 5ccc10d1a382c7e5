// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {GmxErrors, GmxEvents, GmxFields, GmxKeys, GmxStore, GmxTypes, IGmxBank, IGmxDataStore, IGmxEventEmitter} from "DevnetGmxCommon.sol";
import {GmxLiquidityErrors, GmxLiquidityKeys, GmxLiquidityTypes, GmxRequests} from "DevnetGmxLiquidity.sol";

interface IDevnetGmxDepositHandler {
    function cancelDeposit(bytes32 key, address caller) external;
    function simulateExecuteDeposit(bytes32 key, GmxLiquidityTypes.SimulatePricesParams memory params) external;
}

interface IDevnetGmxWithdrawalHandler {
    function cancelWithdrawal(bytes32 key, address caller) external;
    function simulateExecuteWithdrawal(bytes32 key, GmxLiquidityTypes.SimulatePricesParams memory params, uint8 swapPricingType) external;
}

/// @notice The ExchangeRouter's deposit and withdrawal functions, with GMX's ABI: the ExchangeRouter (at the code
/// size limit) delegatecalls its fallback here, so msg.sender and msg.value are the router's caller's and a
/// multicall's sendWnt/sendTokens + createDeposit work as on GMX. Requests are created here (as the ExchangeRouter,
/// a CONTROLLER: the vaults, the DataStore, the EventEmitter), executed and cancelled by the handlers. Any other
/// selector: NotOnTheDevnet. Its immutables live in its code, so it needs no storage.
contract DevnetGmxLiquidityRouter {
    IGmxDataStore public immutable dataStore;
    IGmxEventEmitter private immutable eventEmitter;
    IGmxBank private immutable depositVault;
    IGmxBank private immutable withdrawalVault;
    IDevnetGmxDepositHandler public immutable depositHandler;
    IDevnetGmxWithdrawalHandler public immutable withdrawalHandler;

    error NotOnTheDevnet(string what);

    constructor(
        IGmxDataStore dataStore_,
        IGmxEventEmitter eventEmitter_,
        IGmxBank depositVault_,
        IGmxBank withdrawalVault_,
        IDevnetGmxDepositHandler depositHandler_,
        IDevnetGmxWithdrawalHandler withdrawalHandler_
    ) {
        dataStore = dataStore_;
        eventEmitter = eventEmitter_;
        depositVault = depositVault_;
        withdrawalVault = withdrawalVault_;
        depositHandler = depositHandler_;
        withdrawalHandler = withdrawalHandler_;
    }

    /// Shifts, GLV, atomic withdrawals and the rest of GMX's ExchangeRouter.
    fallback() external payable {
        revert NotOnTheDevnet("shifts, GLV and the rest of GMX's ExchangeRouter");
    }

    function cancelDeposit(bytes32 key) external payable {
        depositHandler.cancelDeposit(key, msg.sender);
    }

    function simulateExecuteLatestDeposit(GmxLiquidityTypes.SimulatePricesParams memory simulatedOracleParams) external payable {
        depositHandler.simulateExecuteDeposit(_latestKey(), simulatedOracleParams);
    }

    function cancelWithdrawal(bytes32 key) external payable {
        withdrawalHandler.cancelWithdrawal(key, msg.sender);
    }

    function simulateExecuteLatestWithdrawal(GmxLiquidityTypes.SimulatePricesParams memory simulatedOracleParams, uint8 swapPricingType) external payable {
        withdrawalHandler.simulateExecuteWithdrawal(_latestKey(), simulatedOracleParams, swapPricingType);
    }

    /// NonceUtils.getCurrentKey: the request created last.
    function _latestKey() private view returns (bytes32) {
        return keccak256(abi.encode(address(dataStore), dataStore.getUint(GmxKeys.NONCE)));
    }

    // ---- creation ----

    /// DepositUtils.createDeposit: the amounts are what the DepositVault received (sendTokens/sendWnt before it).
    function createDeposit(GmxLiquidityTypes.CreateDepositParams calldata params) external payable returns (bytes32 key) {
        address account = msg.sender;
        IGmxDataStore ds = dataStore;
        GmxTypes.MarketProps memory m = GmxStore.getEnabledMarket(ds, params.addresses.market);
        uint256 swaps = params.addresses.longTokenSwapPath.length + params.addresses.shortTokenSwapPath.length;
        if (swaps > 0) revert GmxErrors.MaxSwapPathLengthExceeded(swaps, 0);
        // Without swap paths the initial tokens are the market's own.
        if (params.addresses.initialLongToken != m.longToken) revert GmxErrors.InvalidCollateralTokenForMarket(m.marketToken, params.addresses.initialLongToken);
        if (params.addresses.initialShortToken != m.shortToken) revert GmxErrors.InvalidCollateralTokenForMarket(m.marketToken, params.addresses.initialShortToken);
        if (params.addresses.receiver == address(0)) revert GmxErrors.EmptyReceiver();

        GmxLiquidityTypes.DepositProps memory d;
        d.numbers.initialLongTokenAmount = depositVault.recordTransferIn(m.longToken);
        d.numbers.initialShortTokenAmount = depositVault.recordTransferIn(m.shortToken);
        d.numbers.executionFee = params.executionFee;
        // The WNT sent carries the execution fee: taken out of the initial amount when WNT is one of the tokens.
        address wnt = ds.getAddress(GmxKeys.WNT);
        if (m.longToken == wnt) d.numbers.initialLongTokenAmount = _lessFee(d.numbers.initialLongTokenAmount, params.executionFee);
        else if (m.shortToken == wnt) d.numbers.initialShortTokenAmount = _lessFee(d.numbers.initialShortTokenAmount, params.executionFee);
        else d.numbers.executionFee = _lessFee(depositVault.recordTransferIn(wnt), params.executionFee) + params.executionFee;
        if (d.numbers.initialLongTokenAmount == 0 && d.numbers.initialShortTokenAmount == 0) revert GmxLiquidityErrors.EmptyDepositAmounts();
        GmxRequests.validateExecutionFee(ds, GmxLiquidityKeys.DEPOSIT_GAS_LIMIT, params.callbackGasLimit, d.numbers.executionFee);

        d.addresses.account = account;
        d.addresses.receiver = params.addresses.receiver;
        d.addresses.callbackContract = params.addresses.callbackContract;
        d.addresses.uiFeeReceiver = params.addresses.uiFeeReceiver;
        d.addresses.market = m.marketToken;
        d.addresses.initialLongToken = m.longToken;
        d.addresses.initialShortToken = m.shortToken;
        d.addresses.longTokenSwapPath = new address[](0);
        d.addresses.shortTokenSwapPath = new address[](0);
        d.numbers.minMarketTokens = params.minMarketTokens;
        d.numbers.updatedAtTime = block.timestamp;
        d.numbers.callbackGasLimit = params.callbackGasLimit;
        d.flags.shouldUnwrapNativeToken = params.shouldUnwrapNativeToken;
        d._dataList = params.dataList;

        // NonceUtils.getNextKey: the same nonce as orders.
        key = keccak256(abi.encode(address(ds), ds.incrementUint(GmxKeys.NONCE, 1)));
        _storeDeposit(ds, key, d);
        _emitDepositCreated(key, d);
    }

    /// `amount` less the execution fee, or InsufficientWntAmountForExecutionFee.
    function _lessFee(uint256 amount, uint256 executionFee) private pure returns (uint256) {
        if (amount < executionFee) revert GmxErrors.InsufficientWntAmountForExecutionFee(amount, executionFee);
        return amount - executionFee;
    }

    /// WithdrawalUtils.createWithdrawal: the GM is what the WithdrawalVault received (sendTokens before it).
    function createWithdrawal(GmxLiquidityTypes.CreateWithdrawalParams calldata params) external payable returns (bytes32 key) {
        address account = msg.sender;
        IGmxDataStore ds = dataStore;
        GmxTypes.MarketProps memory m = GmxStore.getEnabledMarket(ds, params.addresses.market);
        uint256 swaps = params.addresses.longTokenSwapPath.length + params.addresses.shortTokenSwapPath.length;
        if (swaps > 0) revert GmxErrors.MaxSwapPathLengthExceeded(swaps, 0);
        if (params.addresses.receiver == address(0)) revert GmxErrors.EmptyReceiver();

        GmxLiquidityTypes.WithdrawalProps memory w;
        uint256 wntAmount = withdrawalVault.recordTransferIn(ds.getAddress(GmxKeys.WNT));
        if (wntAmount < params.executionFee) revert GmxErrors.InsufficientWntAmountForExecutionFee(wntAmount, params.executionFee);
        w.numbers.executionFee = wntAmount;
        w.numbers.marketTokenAmount = withdrawalVault.recordTransferIn(m.marketToken);
        if (w.numbers.marketTokenAmount == 0) revert GmxLiquidityErrors.EmptyWithdrawalAmount();
        GmxRequests.validateExecutionFee(ds, GmxLiquidityKeys.WITHDRAWAL_GAS_LIMIT, params.callbackGasLimit, w.numbers.executionFee);

        w.addresses.account = account;
        w.addresses.receiver = params.addresses.receiver;
        w.addresses.callbackContract = params.addresses.callbackContract;
        w.addresses.uiFeeReceiver = params.addresses.uiFeeReceiver;
        w.addresses.market = m.marketToken;
        w.addresses.longTokenSwapPath = new address[](0);
        w.addresses.shortTokenSwapPath = new address[](0);
        w.numbers.minLongTokenAmount = params.minLongTokenAmount;
        w.numbers.minShortTokenAmount = params.minShortTokenAmount;
        w.numbers.updatedAtTime = block.timestamp;
        w.numbers.callbackGasLimit = params.callbackGasLimit;
        w.flags.shouldUnwrapNativeToken = params.shouldUnwrapNativeToken;
        w._dataList = params.dataList;

        // NonceUtils.getNextKey: the same nonce as orders and deposits.
        key = keccak256(abi.encode(address(ds), ds.incrementUint(GmxKeys.NONCE, 1)));
        _storeWithdrawal(ds, key, w);
        _emitWithdrawalCreated(key, w);
    }

    // ---- the store (DepositStoreUtils / WithdrawalStoreUtils: keccak256(abi.encode(key, FIELD))) ----

    function _storeDeposit(IGmxDataStore ds, bytes32 key, GmxLiquidityTypes.DepositProps memory d) private {
        ds.addBytes32(GmxLiquidityKeys.DEPOSIT_LIST, key);
        ds.addBytes32(GmxLiquidityKeys.accountList(GmxLiquidityKeys.ACCOUNT_DEPOSIT_LIST, d.addresses.account), key);
        ds.setAddress(GmxKeys.field(key, GmxFields.ACCOUNT), d.addresses.account);
        ds.setAddress(GmxKeys.field(key, GmxFields.RECEIVER), d.addresses.receiver);
        ds.setAddress(GmxKeys.field(key, GmxFields.CALLBACK_CONTRACT), d.addresses.callbackContract);
        ds.setAddress(GmxKeys.field(key, GmxFields.UI_FEE_RECEIVER), d.addresses.uiFeeReceiver);
        ds.setAddress(GmxKeys.field(key, GmxFields.MARKET), d.addresses.market);
        ds.setAddress(GmxKeys.field(key, GmxLiquidityKeys.INITIAL_LONG_TOKEN), d.addresses.initialLongToken);
        ds.setAddress(GmxKeys.field(key, GmxLiquidityKeys.INITIAL_SHORT_TOKEN), d.addresses.initialShortToken);
        ds.setUint(GmxKeys.field(key, GmxLiquidityKeys.INITIAL_LONG_TOKEN_AMOUNT), d.numbers.initialLongTokenAmount);
        ds.setUint(GmxKeys.field(key, GmxLiquidityKeys.INITIAL_SHORT_TOKEN_AMOUNT), d.numbers.initialShortTokenAmount);
        ds.setUint(GmxKeys.field(key, GmxLiquidityKeys.MIN_MARKET_TOKENS), d.numbers.minMarketTokens);
        ds.setUint(GmxKeys.field(key, GmxFields.UPDATED_AT_TIME), d.numbers.updatedAtTime);
        ds.setUint(GmxKeys.field(key, GmxFields.EXECUTION_FEE), d.numbers.executionFee);
        ds.setUint(GmxKeys.field(key, GmxFields.CALLBACK_GAS_LIMIT), d.numbers.callbackGasLimit);
        ds.setBool(GmxKeys.field(key, GmxFields.SHOULD_UNWRAP_NATIVE_TOKEN), d.flags.shouldUnwrapNativeToken);
    }

    function _storeWithdrawal(IGmxDataStore ds, bytes32 key, GmxLiquidityTypes.WithdrawalProps memory w) private {
        ds.addBytes32(GmxLiquidityKeys.WITHDRAWAL_LIST, key);
        ds.addBytes32(GmxLiquidityKeys.accountList(GmxLiquidityKeys.ACCOUNT_WITHDRAWAL_LIST, w.addresses.account), key);
        ds.setAddress(GmxKeys.field(key, GmxFields.ACCOUNT), w.addresses.account);
        ds.setAddress(GmxKeys.field(key, GmxFields.RECEIVER), w.addresses.receiver);
        ds.setAddress(GmxKeys.field(key, GmxFields.CALLBACK_CONTRACT), w.addresses.callbackContract);
        ds.setAddress(GmxKeys.field(key, GmxFields.UI_FEE_RECEIVER), w.addresses.uiFeeReceiver);
        ds.setAddress(GmxKeys.field(key, GmxFields.MARKET), w.addresses.market);
        ds.setUint(GmxKeys.field(key, GmxLiquidityKeys.MARKET_TOKEN_AMOUNT), w.numbers.marketTokenAmount);
        ds.setUint(GmxKeys.field(key, GmxLiquidityKeys.MIN_LONG_TOKEN_AMOUNT), w.numbers.minLongTokenAmount);
        ds.setUint(GmxKeys.field(key, GmxLiquidityKeys.MIN_SHORT_TOKEN_AMOUNT), w.numbers.minShortTokenAmount);
        ds.setUint(GmxKeys.field(key, GmxFields.UPDATED_AT_TIME), w.numbers.updatedAtTime);
        ds.setUint(GmxKeys.field(key, GmxFields.EXECUTION_FEE), w.numbers.executionFee);
        ds.setUint(GmxKeys.field(key, GmxFields.CALLBACK_GAS_LIMIT), w.numbers.callbackGasLimit);
        ds.setBool(GmxKeys.field(key, GmxFields.SHOULD_UNWRAP_NATIVE_TOKEN), w.flags.shouldUnwrapNativeToken);
    }

    /// DepositEventUtils.emitDepositCreated's items.
    function _emitDepositCreated(bytes32 key, GmxLiquidityTypes.DepositProps memory d) private {
        GmxEvents.EventLogData memory e = GmxEvents.init(7, 8, 0, 1, 1);
        GmxEvents.addr(e, 0, "account", d.addresses.account);
        GmxEvents.addr(e, 1, "receiver", d.addresses.receiver);
        GmxEvents.addr(e, 2, "callbackContract", d.addresses.callbackContract);
        GmxEvents.addr(e, 3, "market", d.addresses.market);
        GmxEvents.addr(e, 4, "initialLongToken", d.addresses.initialLongToken);
        GmxEvents.addr(e, 5, "initialShortToken", d.addresses.initialShortToken);
        GmxEvents.addr(e, 6, "uiFeeReceiver", d.addresses.uiFeeReceiver);
        e.addressItems.arrayItems = new GmxEvents.AddressArrayKeyValue[](2);
        e.addressItems.arrayItems[0] = GmxEvents.AddressArrayKeyValue("longTokenSwapPath", d.addresses.longTokenSwapPath);
        e.addressItems.arrayItems[1] = GmxEvents.AddressArrayKeyValue("shortTokenSwapPath", d.addresses.shortTokenSwapPath);
        GmxEvents.uintItem(e, 0, "initialLongTokenAmount", d.numbers.initialLongTokenAmount);
        GmxEvents.uintItem(e, 1, "initialShortTokenAmount", d.numbers.initialShortTokenAmount);
        GmxEvents.uintItem(e, 2, "minMarketTokens", d.numbers.minMarketTokens);
        GmxEvents.uintItem(e, 3, "updatedAtTime", d.numbers.updatedAtTime);
        GmxEvents.uintItem(e, 4, "executionFee", d.numbers.executionFee);
        GmxEvents.uintItem(e, 5, "callbackGasLimit", d.numbers.callbackGasLimit);
        GmxEvents.uintItem(e, 6, "srcChainId", d.numbers.srcChainId);
        GmxEvents.uintItem(e, 7, "depositType", 0);
        GmxEvents.boolItem(e, 0, "shouldUnwrapNativeToken", d.flags.shouldUnwrapNativeToken);
        GmxEvents.b32(e, 0, "key", key);
        e.bytes32Items.arrayItems = new GmxEvents.Bytes32ArrayKeyValue[](1);
        e.bytes32Items.arrayItems[0] = GmxEvents.Bytes32ArrayKeyValue("dataList", d._dataList);
        eventEmitter.emitEventLog2("DepositCreated", key, _topic(d.addresses.account), e);
    }

    /// WithdrawalEventUtils.emitWithdrawalCreated's items.
    function _emitWithdrawalCreated(bytes32 key, GmxLiquidityTypes.WithdrawalProps memory w) private {
        GmxEvents.EventLogData memory e = GmxEvents.init(5, 8, 0, 1, 1);
        GmxEvents.addr(e, 0, "account", w.addresses.account);
        GmxEvents.addr(e, 1, "receiver", w.addresses.receiver);
        GmxEvents.addr(e, 2, "callbackContract", w.addresses.callbackContract);
        GmxEvents.addr(e, 3, "market", w.addresses.market);
        GmxEvents.addr(e, 4, "uiFeeReceiver", w.addresses.uiFeeReceiver);
        e.addressItems.arrayItems = new GmxEvents.AddressArrayKeyValue[](2);
        e.addressItems.arrayItems[0] = GmxEvents.AddressArrayKeyValue("longTokenSwapPath", w.addresses.longTokenSwapPath);
        e.addressItems.arrayItems[1] = GmxEvents.AddressArrayKeyValue("shortTokenSwapPath", w.addresses.shortTokenSwapPath);
        GmxEvents.uintItem(e, 0, "marketTokenAmount", w.numbers.marketTokenAmount);
        GmxEvents.uintItem(e, 1, "minLongTokenAmount", w.numbers.minLongTokenAmount);
        GmxEvents.uintItem(e, 2, "minShortTokenAmount", w.numbers.minShortTokenAmount);
        GmxEvents.uintItem(e, 3, "updatedAtTime", w.numbers.updatedAtTime);
        GmxEvents.uintItem(e, 4, "executionFee", w.numbers.executionFee);
        GmxEvents.uintItem(e, 5, "callbackGasLimit", w.numbers.callbackGasLimit);
        GmxEvents.uintItem(e, 6, "srcChainId", w.numbers.srcChainId);
        GmxEvents.uintItem(e, 7, "withdrawalType", 0);
        GmxEvents.boolItem(e, 0, "shouldUnwrapNativeToken", w.flags.shouldUnwrapNativeToken);
        GmxEvents.b32(e, 0, "key", key);
        e.bytes32Items.arrayItems = new GmxEvents.Bytes32ArrayKeyValue[](1);
        e.bytes32Items.arrayItems[0] = GmxEvents.Bytes32ArrayKeyValue("dataList", w._dataList);
        eventEmitter.emitEventLog2("WithdrawalCreated", key, _topic(w.addresses.account), e);
    }

    function _topic(address account) private pure returns (bytes32) {
        return bytes32(uint256(uint160(account)));
    }
}
