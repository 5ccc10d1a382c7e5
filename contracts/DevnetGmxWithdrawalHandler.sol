// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {
    GmxErrors, GmxEvents, GmxFields, GmxKeys, GmxRoleModule, GmxStore, GmxTypes, IGmxBank, IGmxDataStore, IGmxEventEmitter, IGmxRoleStore
} from "DevnetGmxCommon.sol";
import {
    GmxLiquidityErrors, GmxLiquidityKeys, GmxLiquidityTypes, GmxRequests, GmxWithdrawalStore, IGmxMarketToken
} from "DevnetGmxLiquidity.sol";
import {DevnetGmxLiquidityReader} from "DevnetGmxLiquidityReader.sol";

/// @notice GMX v2's WithdrawalHandler for the devnet: GM sent to the WithdrawalVault is redeemed for the market's
/// long and short tokens, pro rata to the pool's USD in each, at the pool's value (less the swap fee). Created and
/// cancelled through the ExchangeRouter's liquidity facet, executed by ORDER_KEEPERs at unsigned prices as orders;
/// a failure cancels the withdrawal (WithdrawalCancelled with the error's name), the GM going back to the account.
contract DevnetGmxWithdrawalHandler is GmxRoleModule {
    IGmxDataStore public immutable dataStore;
    IGmxEventEmitter public immutable eventEmitter;
    IGmxBank public immutable withdrawalVault;
    /// The pool math (GM in and out), the Reader's liquidity facet called as a contract: this one stays small.
    DevnetGmxLiquidityReader public immutable pricing;

    error OnlySelf();

    constructor(IGmxRoleStore roleStore_, IGmxDataStore dataStore_, IGmxEventEmitter eventEmitter_, IGmxBank withdrawalVault_, DevnetGmxLiquidityReader pricing_)
        GmxRoleModule(roleStore_)
    {
        pricing = pricing_;
        dataStore = dataStore_;
        eventEmitter = eventEmitter_;
        withdrawalVault = withdrawalVault_;
    }

    // ---- execution ----

    function executeWithdrawal(bytes32 key, GmxLiquidityTypes.SetPricesParams calldata oracleParams) external onlyRole(GmxKeys.ORDER_KEEPER, "ORDER_KEEPER") {
        uint256 startingGas = gasleft();
        GmxLiquidityTypes.WithdrawalProps memory w = getWithdrawal(key);
        if (w.addresses.account == address(0)) revert GmxLiquidityErrors.EmptyWithdrawal();
        GmxTypes.MarketPrices memory prices =
            GmxRequests.oraclePrices(dataStore, GmxStore.getMarket(dataStore, w.addresses.market), oracleParams, w.numbers.updatedAtTime);
        address refundTo = w.addresses.receiver;
        try this.executeWithdrawalInternal(key, prices) {}
        catch (bytes memory reasonBytes) {
            _cancel(key, w, GmxLiquidityErrors.nameOf(reasonBytes), reasonBytes);
            refundTo = w.addresses.account;
        }
        GmxRequests.payExecutionFee(dataStore, withdrawalVault, w.numbers.executionFee, startingGas, msg.sender, refundTo);
    }

    function executeWithdrawalInternal(bytes32 key, GmxTypes.MarketPrices memory prices) external {
        if (msg.sender != address(this)) revert OnlySelf();
        _execute(key, prices, GmxLiquidityKeys.PRICING_WITHDRAWAL);
    }

    /// The withdrawal executed at the given prices, then EndOfOracleSimulation (or the execution's own error).
    function simulateExecuteWithdrawal(bytes32 key, GmxLiquidityTypes.SimulatePricesParams memory params, uint8 swapPricingType)
        external
        onlyRole(GmxKeys.CONTROLLER, "CONTROLLER")
    {
        address market = dataStore.getAddress(GmxKeys.field(key, GmxFields.MARKET));
        if (market == address(0)) revert GmxLiquidityErrors.EmptyWithdrawal();
        _execute(key, GmxRequests.simulatedPrices(GmxStore.getMarket(dataStore, market), params), swapPricingType);
        revert GmxErrors.EndOfOracleSimulation();
    }

    /// ExecuteWithdrawalUtils.executeWithdrawal: the GM burnt, the tokens paid out of the pool.
    function _execute(bytes32 key, GmxTypes.MarketPrices memory prices, uint256 swapPricingType) private {
        IGmxDataStore ds = dataStore;
        GmxLiquidityTypes.WithdrawalProps memory w = getWithdrawal(key);
        if (w.addresses.account == address(0)) revert GmxLiquidityErrors.EmptyWithdrawal();
        GmxTypes.MarketProps memory m = GmxStore.getEnabledMarket(ds, w.addresses.market);
        (uint256 longOut, uint256 shortOut) = pricing.getWithdrawalAmountOut(ds, m, prices, w.numbers.marketTokenAmount, address(0), uint8(swapPricingType));
        if (longOut < w.numbers.minLongTokenAmount) revert GmxLiquidityErrors.MinLongTokens(longOut, w.numbers.minLongTokenAmount);
        if (shortOut < w.numbers.minShortTokenAmount) revert GmxLiquidityErrors.MinShortTokens(shortOut, w.numbers.minShortTokenAmount);
        _remove(ds, key, w.addresses.account);
        // GMX's way: the GM moves from the vault to the market token, which burns its own.
        withdrawalVault.transferOut(m.marketToken, m.marketToken, w.numbers.marketTokenAmount);
        IGmxMarketToken(m.marketToken).burn(m.marketToken, w.numbers.marketTokenAmount);
        _outOfPool(ds, m, m.longToken, w, longOut);
        _outOfPool(ds, m, m.shortToken, w, shortOut);

        GmxEvents.EventLogData memory e = GmxEvents.init(1, 1, 0, 0, 1);
        GmxEvents.b32(e, 0, "key", key);
        GmxEvents.addr(e, 0, "account", w.addresses.account);
        GmxEvents.uintItem(e, 0, "swapPricingType", swapPricingType);
        eventEmitter.emitEventLog2("WithdrawalExecuted", key, _topic(w.addresses.account), e);
    }

    function _outOfPool(IGmxDataStore ds, GmxTypes.MarketProps memory m, address token, GmxLiquidityTypes.WithdrawalProps memory w, uint256 amount) private {
        if (amount == 0) return;
        bytes32 poolKey = GmxKeys.marketToken(GmxKeys.POOL_AMOUNT, m.marketToken, token);
        uint256 pool = ds.getUint(poolKey);
        if (pool < amount) revert GmxErrors.InsufficientPoolAmount(pool, amount);
        ds.setUint(poolKey, pool - amount);
        GmxRequests.sendOut(IGmxBank(m.marketToken), token, ds.getAddress(GmxKeys.WNT), w.addresses.receiver, amount, w.flags.shouldUnwrapNativeToken);
    }

    // ---- cancellation (WithdrawalUtils.cancelWithdrawal) ----

    /// The account's own cancellation through the ExchangeRouter, after REQUEST_EXPIRATION_TIME: the GM and the
    /// whole execution fee back.
    function cancelWithdrawal(bytes32 key, address caller) external onlyRole(GmxKeys.CONTROLLER, "CONTROLLER") {
        GmxLiquidityTypes.WithdrawalProps memory w = getWithdrawal(key);
        if (w.addresses.account == address(0)) revert GmxLiquidityErrors.EmptyWithdrawal();
        if (w.addresses.account != caller) revert GmxErrors.Unauthorized(caller, "account for cancelWithdrawal");
        GmxRequests.validateCancellable(dataStore, w.numbers.updatedAtTime, "Withdrawal");
        _cancel(key, w, "USER_INITIATED_CANCEL", "");
        withdrawalVault.transferOutNativeToken(w.addresses.account, w.numbers.executionFee);
    }

    function _cancel(bytes32 key, GmxLiquidityTypes.WithdrawalProps memory w, string memory reason, bytes memory reasonBytes) private {
        _remove(dataStore, key, w.addresses.account);
        withdrawalVault.transferOut(w.addresses.market, w.addresses.account, w.numbers.marketTokenAmount);
        GmxEvents.EventLogData memory e = GmxEvents.init(1, 0, 0, 0, 1);
        GmxEvents.b32(e, 0, "key", key);
        GmxEvents.addr(e, 0, "account", w.addresses.account);
        e.stringItems.items = new GmxEvents.StringKeyValue[](1);
        e.stringItems.items[0] = GmxEvents.StringKeyValue("reason", reason);
        e.bytesItems.items = new GmxEvents.BytesKeyValue[](1);
        e.bytesItems.items[0] = GmxEvents.BytesKeyValue("reasonBytes", reasonBytes);
        eventEmitter.emitEventLog2("WithdrawalCancelled", key, _topic(w.addresses.account), e);
    }

    // ---- the store (WithdrawalStoreUtils: keccak256(abi.encode(key, FIELD))) ----

    /// The withdrawal, or an empty one (account zero) when the key is not in WITHDRAWAL_LIST.
    function getWithdrawal(bytes32 key) public view returns (GmxLiquidityTypes.WithdrawalProps memory) {
        return GmxWithdrawalStore.get(dataStore, key);
    }

    function _remove(IGmxDataStore ds, bytes32 key, address account) private {
        bytes32[5] memory addresses = [GmxFields.ACCOUNT, GmxFields.RECEIVER, GmxFields.CALLBACK_CONTRACT, GmxFields.UI_FEE_RECEIVER, GmxFields.MARKET];
        for (uint256 i = 0; i < addresses.length; i++) ds.setAddress(GmxKeys.field(key, addresses[i]), address(0));
        bytes32[6] memory uints = [
            GmxLiquidityKeys.MARKET_TOKEN_AMOUNT, GmxLiquidityKeys.MIN_LONG_TOKEN_AMOUNT, GmxLiquidityKeys.MIN_SHORT_TOKEN_AMOUNT,
            GmxFields.UPDATED_AT_TIME, GmxFields.EXECUTION_FEE, GmxFields.CALLBACK_GAS_LIMIT
        ];
        for (uint256 i = 0; i < uints.length; i++) ds.setUint(GmxKeys.field(key, uints[i]), 0);
        ds.setBool(GmxKeys.field(key, GmxFields.SHOULD_UNWRAP_NATIVE_TOKEN), false);
        ds.removeBytes32(GmxLiquidityKeys.WITHDRAWAL_LIST, key);
        ds.removeBytes32(GmxLiquidityKeys.accountList(GmxLiquidityKeys.ACCOUNT_WITHDRAWAL_LIST, account), key);
    }

    function _topic(address account) private pure returns (bytes32) {
        return bytes32(uint256(uint160(account)));
    }
}
