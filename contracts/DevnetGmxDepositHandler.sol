// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {
    GmxErrors, GmxEvents, GmxFields, GmxKeys, GmxRoleModule, GmxStore, GmxTypes, IGmxBank, IGmxDataStore, IGmxEventEmitter, IGmxRoleStore
} from "DevnetGmxCommon.sol";
import {
    GmxDepositStore, GmxLiquidityErrors, GmxLiquidityKeys, GmxLiquidityTypes, GmxPool, GmxRequests, IGmxMarketToken
} from "DevnetGmxLiquidity.sol";
import {DevnetGmxLiquidityReader} from "DevnetGmxLiquidityReader.sol";

/// @notice GMX v2's DepositHandler for the devnet: deposits of a market's long and/or short token for its GM.
/// The ExchangeRouter (through its liquidity facet) creates and cancels them for the caller; ORDER_KEEPERs execute
/// them at the prices of OracleUtils.SetPricesParams (unsigned, as orders): the tokens move from the DepositVault to
/// the pool, GM is minted to the receiver at the pool's value (less the swap fee and price impact), and a failure cancels the
/// deposit (DepositCancelled with the error's name), the tokens going back to the account.
contract DevnetGmxDepositHandler is GmxRoleModule {
    IGmxDataStore public immutable dataStore;
    IGmxEventEmitter public immutable eventEmitter;
    IGmxBank public immutable depositVault;
    /// The pool math (GM in and out), the Reader's liquidity facet called as a contract: this one stays small.
    DevnetGmxLiquidityReader public immutable pricing;

    error OnlySelf();

    constructor(IGmxRoleStore roleStore_, IGmxDataStore dataStore_, IGmxEventEmitter eventEmitter_, IGmxBank depositVault_, DevnetGmxLiquidityReader pricing_)
        GmxRoleModule(roleStore_)
    {
        pricing = pricing_;
        dataStore = dataStore_;
        eventEmitter = eventEmitter_;
        depositVault = depositVault_;
    }

    // ---- execution ----

    function executeDeposit(bytes32 key, GmxLiquidityTypes.SetPricesParams calldata oracleParams) external onlyRole(GmxKeys.ORDER_KEEPER, "ORDER_KEEPER") {
        uint256 startingGas = gasleft();
        GmxLiquidityTypes.DepositProps memory d = getDeposit(key);
        if (d.addresses.account == address(0)) revert GmxLiquidityErrors.EmptyDeposit();
        GmxTypes.MarketPrices memory prices =
            GmxRequests.oraclePrices(dataStore, GmxStore.getMarket(dataStore, d.addresses.market), oracleParams, d.numbers.updatedAtTime);
        // The rest of the fee goes to the receiver after an execution, to the account after a cancellation (GMX's).
        address refundTo = d.addresses.receiver;
        try this.executeDepositInternal(key, prices) {}
        catch (bytes memory reasonBytes) {
            _cancel(key, d, GmxLiquidityErrors.nameOf(reasonBytes), reasonBytes);
            refundTo = d.addresses.account;
        }
        GmxRequests.payExecutionFee(dataStore, depositVault, d.numbers.executionFee, startingGas, msg.sender, refundTo);
    }

    function executeDepositInternal(bytes32 key, GmxTypes.MarketPrices memory prices) external {
        if (msg.sender != address(this)) revert OnlySelf();
        _execute(key, prices, GmxLiquidityKeys.PRICING_DEPOSIT);
    }

    /// The deposit executed at the given prices, then EndOfOracleSimulation (or the execution's own error).
    function simulateExecuteDeposit(bytes32 key, GmxLiquidityTypes.SimulatePricesParams memory params) external onlyRole(GmxKeys.CONTROLLER, "CONTROLLER") {
        address market = dataStore.getAddress(GmxKeys.field(key, GmxFields.MARKET));
        if (market == address(0)) revert GmxLiquidityErrors.EmptyDeposit();
        _execute(key, GmxRequests.simulatedPrices(GmxStore.getMarket(dataStore, market), params), GmxLiquidityKeys.PRICING_DEPOSIT);
        revert GmxErrors.EndOfOracleSimulation();
    }

    /// ExecuteDepositUtils.executeDeposit: the tokens into the pool (fees included: they stay in it), GM minted.
    function _execute(bytes32 key, GmxTypes.MarketPrices memory prices, uint256 swapPricingType) private {
        IGmxDataStore ds = dataStore;
        GmxLiquidityTypes.DepositProps memory d = getDeposit(key);
        if (d.addresses.account == address(0)) revert GmxLiquidityErrors.EmptyDeposit();
        GmxTypes.MarketProps memory m = GmxStore.getEnabledMarket(ds, d.addresses.market);
        GmxPool.DepositOut memory out = pricing.getDepositBreakdown(ds, m, prices, d.numbers.initialLongTokenAmount, d.numbers.initialShortTokenAmount, swapPricingType);
        uint256 minted = out.marketTokens;
        if (minted < d.numbers.minMarketTokens) revert GmxLiquidityErrors.MinMarketTokens(minted, d.numbers.minMarketTokens);
        _remove(ds, key, d.addresses.account);
        // All the tokens move to the market; its pool and its swap impact pool share them.
        depositVault.transferOut(m.longToken, m.marketToken, d.numbers.initialLongTokenAmount);
        depositVault.transferOut(m.shortToken, m.marketToken, d.numbers.initialShortTokenAmount);
        _account(ds, m.marketToken, m.longToken, out.intoPool[0], out.impactPoolDelta[0]);
        _account(ds, m.marketToken, m.shortToken, out.intoPool[1], out.impactPoolDelta[1]);
        IGmxMarketToken(m.marketToken).mint(d.addresses.receiver, minted);

        GmxEvents.EventLogData memory e = GmxEvents.init(1, 4, 0, 0, 1);
        GmxEvents.b32(e, 0, "key", key);
        GmxEvents.addr(e, 0, "account", d.addresses.account);
        GmxEvents.uintItem(e, 0, "longTokenAmount", d.numbers.initialLongTokenAmount);
        GmxEvents.uintItem(e, 1, "shortTokenAmount", d.numbers.initialShortTokenAmount);
        GmxEvents.uintItem(e, 2, "receivedMarketTokens", minted);
        GmxEvents.uintItem(e, 3, "swapPricingType", swapPricingType);
        eventEmitter.emitEventLog2("DepositExecuted", key, _topic(d.addresses.account), e);
    }

    function _account(IGmxDataStore ds, address market, address token, uint256 intoPool, int256 impactPoolDelta) private {
        if (intoPool > 0) ds.incrementUint(GmxKeys.marketToken(GmxKeys.POOL_AMOUNT, market, token), intoPool);
        if (impactPoolDelta != 0) ds.applyDeltaToUint(GmxLiquidityKeys.swapImpactPoolAmount(market, token), impactPoolDelta, "swap impact pool");
    }

    // ---- cancellation (DepositUtils.cancelDeposit) ----

    /// The account's own cancellation through the ExchangeRouter, after REQUEST_EXPIRATION_TIME: tokens and the
    /// whole execution fee back.
    function cancelDeposit(bytes32 key, address caller) external onlyRole(GmxKeys.CONTROLLER, "CONTROLLER") {
        GmxLiquidityTypes.DepositProps memory d = getDeposit(key);
        if (d.addresses.account == address(0)) revert GmxLiquidityErrors.EmptyDeposit();
        if (d.addresses.account != caller) revert GmxErrors.Unauthorized(caller, "account for cancelDeposit");
        GmxRequests.validateCancellable(dataStore, d.numbers.updatedAtTime, "Deposit");
        _cancel(key, d, "USER_INITIATED_CANCEL", "");
        depositVault.transferOutNativeToken(d.addresses.account, d.numbers.executionFee);
    }

    function _cancel(bytes32 key, GmxLiquidityTypes.DepositProps memory d, string memory reason, bytes memory reasonBytes) private {
        _remove(dataStore, key, d.addresses.account);
        address wnt = dataStore.getAddress(GmxKeys.WNT);
        bool unwrap = d.flags.shouldUnwrapNativeToken;
        GmxRequests.sendOut(depositVault, d.addresses.initialLongToken, wnt, d.addresses.account, d.numbers.initialLongTokenAmount, unwrap);
        GmxRequests.sendOut(depositVault, d.addresses.initialShortToken, wnt, d.addresses.account, d.numbers.initialShortTokenAmount, unwrap);
        GmxEvents.EventLogData memory e = GmxEvents.init(1, 0, 0, 0, 1);
        GmxEvents.b32(e, 0, "key", key);
        GmxEvents.addr(e, 0, "account", d.addresses.account);
        e.stringItems.items = new GmxEvents.StringKeyValue[](1);
        e.stringItems.items[0] = GmxEvents.StringKeyValue("reason", reason);
        e.bytesItems.items = new GmxEvents.BytesKeyValue[](1);
        e.bytesItems.items[0] = GmxEvents.BytesKeyValue("reasonBytes", reasonBytes);
        eventEmitter.emitEventLog2("DepositCancelled", key, _topic(d.addresses.account), e);
    }

    // ---- the store (DepositStoreUtils: keccak256(abi.encode(key, FIELD))) ----

    /// The deposit, or an empty one (account zero) when the key is not in DEPOSIT_LIST.
    function getDeposit(bytes32 key) public view returns (GmxLiquidityTypes.DepositProps memory d) {
        return GmxDepositStore.get(dataStore, key);
    }

    function _remove(IGmxDataStore ds, bytes32 key, address account) private {
        bytes32[7] memory addresses = [
            GmxFields.ACCOUNT, GmxFields.RECEIVER, GmxFields.CALLBACK_CONTRACT, GmxFields.UI_FEE_RECEIVER, GmxFields.MARKET,
            GmxLiquidityKeys.INITIAL_LONG_TOKEN, GmxLiquidityKeys.INITIAL_SHORT_TOKEN
        ];
        for (uint256 i = 0; i < addresses.length; i++) ds.setAddress(GmxKeys.field(key, addresses[i]), address(0));
        bytes32[6] memory uints = [
            GmxLiquidityKeys.INITIAL_LONG_TOKEN_AMOUNT, GmxLiquidityKeys.INITIAL_SHORT_TOKEN_AMOUNT, GmxLiquidityKeys.MIN_MARKET_TOKENS,
            GmxFields.UPDATED_AT_TIME, GmxFields.EXECUTION_FEE, GmxFields.CALLBACK_GAS_LIMIT
        ];
        for (uint256 i = 0; i < uints.length; i++) ds.setUint(GmxKeys.field(key, uints[i]), 0);
        ds.setBool(GmxKeys.field(key, GmxFields.SHOULD_UNWRAP_NATIVE_TOKEN), false);
        ds.removeBytes32(GmxLiquidityKeys.DEPOSIT_LIST, key);
        ds.removeBytes32(GmxLiquidityKeys.accountList(GmxLiquidityKeys.ACCOUNT_DEPOSIT_LIST, account), key);
    }

    function _topic(address account) private pure returns (bytes32) {
        return bytes32(uint256(uint160(account)));
    }
}
