// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {GmxErrors, GmxFields, GmxKeys, GmxMath, GmxStore, GmxTypes, IGmxBank, IGmxDataStore} from "DevnetGmxCommon.sol";

/// What the deposit and withdrawal handlers, the ExchangeRouter's liquidity facet and the Reader's liquidity facet
/// share: GMX's Deposit/Withdrawal structs (the ABI's shapes), their DataStore keys (Keys.sol, DepositStoreUtils,
/// WithdrawalStoreUtils), the pool value (MarketUtils.getPoolValueInfo) and the GM amounts in and out.
/// No contract of this file's name: it compiles into no artifact of its own.

interface IGmxMarketToken {
    function totalSupply() external view returns (uint256);
    function mint(address account, uint256 amount) external;
    function burn(address account, uint256 amount) external;
}

library GmxLiquidityTypes {
    struct DepositAddresses {
        address account;
        address receiver;
        address callbackContract;
        address uiFeeReceiver;
        address market;
        address initialLongToken;
        address initialShortToken;
        address[] longTokenSwapPath;
        address[] shortTokenSwapPath;
    }

    struct DepositNumbers {
        uint256 initialLongTokenAmount;
        uint256 initialShortTokenAmount;
        uint256 minMarketTokens;
        uint256 updatedAtTime;
        uint256 executionFee;
        uint256 callbackGasLimit;
        uint256 srcChainId;
    }

    struct DepositFlags {
        bool shouldUnwrapNativeToken;
    }

    struct DepositProps {
        DepositAddresses addresses;
        DepositNumbers numbers;
        DepositFlags flags;
        bytes32[] _dataList;
    }

    struct WithdrawalAddresses {
        address account;
        address receiver;
        address callbackContract;
        address uiFeeReceiver;
        address market;
        address[] longTokenSwapPath;
        address[] shortTokenSwapPath;
    }

    struct WithdrawalNumbers {
        uint256 marketTokenAmount;
        uint256 minLongTokenAmount;
        uint256 minShortTokenAmount;
        uint256 updatedAtTime;
        uint256 executionFee;
        uint256 callbackGasLimit;
        uint256 srcChainId;
    }

    struct WithdrawalFlags {
        bool shouldUnwrapNativeToken;
    }

    struct WithdrawalProps {
        WithdrawalAddresses addresses;
        WithdrawalNumbers numbers;
        WithdrawalFlags flags;
        bytes32[] _dataList;
    }

    struct CreateDepositParamsAddresses {
        address receiver;
        address callbackContract;
        address uiFeeReceiver;
        address market;
        address initialLongToken;
        address initialShortToken;
        address[] longTokenSwapPath;
        address[] shortTokenSwapPath;
    }

    struct CreateDepositParams {
        CreateDepositParamsAddresses addresses;
        uint256 minMarketTokens;
        bool shouldUnwrapNativeToken;
        uint256 executionFee;
        uint256 callbackGasLimit;
        bytes32[] dataList;
    }

    struct CreateWithdrawalParamsAddresses {
        address receiver;
        address callbackContract;
        address uiFeeReceiver;
        address market;
        address[] longTokenSwapPath;
        address[] shortTokenSwapPath;
    }

    struct CreateWithdrawalParams {
        CreateWithdrawalParamsAddresses addresses;
        uint256 minLongTokenAmount;
        uint256 minShortTokenAmount;
        bool shouldUnwrapNativeToken;
        uint256 executionFee;
        uint256 callbackGasLimit;
        bytes32[] dataList;
    }

    /// OracleUtils.SetPricesParams as the devnet's keeper sends it (unsigned: data[i] = abi.encode(min, max, timestamp)).
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

    /// MarketPoolValueInfo.Props, field for field as the Reader's ABI has it.
    struct PoolValueInfo {
        int256 poolValue;
        int256 longPnl;
        int256 shortPnl;
        int256 netPnl;
        uint256 longTokenAmount;
        uint256 shortTokenAmount;
        uint256 longTokenUsd;
        uint256 shortTokenUsd;
        uint256 totalBorrowingFees;
        uint256 borrowingFeePoolFactor;
        uint256 impactPoolAmount;
        uint256 lentImpactPoolAmount;
    }
}

/// Keys.sol's names for deposits and withdrawals, and the store-utils field names (keccak256(abi.encode(NAME))).
library GmxLiquidityKeys {
    bytes32 internal constant DEPOSIT_LIST = 0x2166c7343d4ca73a6399ca8425e6490d3b231faf254a8d6773d80b449fab46a3;
    bytes32 internal constant ACCOUNT_DEPOSIT_LIST = 0x5c404a055e2d503b33a9fa5a337346721237b9c31ea651df0abc84ef82a0eaeb;
    bytes32 internal constant WITHDRAWAL_LIST = 0xa0e12a7533998e22054310527710129373aaf51361c57ff86c1d9cda91267d87;
    bytes32 internal constant ACCOUNT_WITHDRAWAL_LIST = 0x5b5e71ec5b2596db39cdab2c176be7b71fddeeed8af808914bac78e71af7c04f;
    bytes32 internal constant DEPOSIT_GAS_LIMIT = 0x584e21a67b50948de3f8d83d0226c3568896d123cdbe7a46d824d0f48aabf184;
    bytes32 internal constant WITHDRAWAL_GAS_LIMIT = 0x2e365620be682b0eaff6521339d5f4a7d6a1c118d9766dad390735f03b07b738;
    bytes32 internal constant SWAP_FEE_FACTOR = 0x94d46da9c8a5f890b6b58c1e6e78b27ac6d05b5b488adb426ef137d5eb0f3599;
    bytes32 internal constant DEPOSIT_FEE_FACTOR = 0x2bf0feec8ff0614372dfa474a194c8ed4afe132cef4a51163d98e9c832164201;
    bytes32 internal constant WITHDRAWAL_FEE_FACTOR = 0xd60dc284de69a24ae24561caecbd4312f09ada08bc2a3c00510944ae52d60bb2;
    bytes32 internal constant SWAP_IMPACT_FACTOR = 0xb7b5078258119da264291f3a2e9abfced2bc31a5991e7e7f1904b6921c6311a7;
    bytes32 internal constant SWAP_IMPACT_EXPONENT_FACTOR = 0xf5696d772a3abd1b31035d4c1d2455016d0edb67544f554fc4fc7aa73f622cd5;
    bytes32 internal constant SWAP_IMPACT_POOL_AMOUNT = 0x4fb1f90d8edf65669df0be41543c031da77cdaa09b807a81bebe3e2aaf3b17cb;

    // Field names (DepositStoreUtils / WithdrawalStoreUtils); ACCOUNT, RECEIVER, … are the orders' GmxFields.
    bytes32 internal constant INITIAL_LONG_TOKEN = 0x554fa7e0b77f363d04713b786175b79ec918814e24794591083fb9b406dc87e1;
    bytes32 internal constant INITIAL_SHORT_TOKEN = 0xb37f4f169ec5a9571cf4778189d9ebe14ef5e359f43373ce8ce0a8a6e65907dd;
    bytes32 internal constant INITIAL_LONG_TOKEN_AMOUNT = 0xe07aed7b06f6d6d2680bdba645f131d8f582eb59019e37d723c805c9d9574ace;
    bytes32 internal constant INITIAL_SHORT_TOKEN_AMOUNT = 0xcf0745caff0f5046a02abc4bb74e744af558d22d21c7fb50a38ef926b1e406e4;
    bytes32 internal constant MIN_MARKET_TOKENS = 0xe82ed7700097f59d56e2bcd032aff8c52aae4f57866dca6e9e3bd65632a74410;
    bytes32 internal constant MARKET_TOKEN_AMOUNT = 0xc44366a15aab5a30c06a0aa4c1271158b236d4a32a0fb5911248f56d39c69c17;
    bytes32 internal constant MIN_LONG_TOKEN_AMOUNT = 0xa710fe3d18ef3eec4d65dca114d1f8be6cfdb2c89459efc12ba99b9808466b47;
    bytes32 internal constant MIN_SHORT_TOKEN_AMOUNT = 0x0b5c2a08d56aafa3c747641c27e37e90c2f85a7609a251d47be84fc16dd81891;

    function accountList(bytes32 list, address account) internal pure returns (bytes32) {
        return keccak256(abi.encode(list, account));
    }

    function swapFeeFactor(address market, bool balanceWasImproved) internal pure returns (bytes32) {
        return keccak256(abi.encode(SWAP_FEE_FACTOR, market, balanceWasImproved));
    }

    /// ISwapPricingUtils.SwapPricingType as GMX 2.1+ numbers it (Swap 0, Shift 1, Atomic 2, Deposit 3, Withdrawal 4):
    /// what a keeper executes a deposit or withdrawal with, and what picks its fee factor.
    uint256 internal constant PRICING_DEPOSIT = 3;
    uint256 internal constant PRICING_WITHDRAWAL = 4;

    /// SwapPricingUtils.getSwapFees' factor: DEPOSIT_FEE_FACTOR for a deposit, WITHDRAWAL_FEE_FACTOR for a
    /// withdrawal, SWAP_FEE_FACTOR for a swap (the other types are not on the devnet and price as a swap).
    function feeFactor(uint256 swapPricingType, address market, bool balanceWasImproved) internal pure returns (bytes32) {
        bytes32 base = swapPricingType == PRICING_DEPOSIT ? DEPOSIT_FEE_FACTOR : swapPricingType == PRICING_WITHDRAWAL ? WITHDRAWAL_FEE_FACTOR : SWAP_FEE_FACTOR;
        return keccak256(abi.encode(base, market, balanceWasImproved));
    }

    function swapImpactFactor(address market, bool isPositive) internal pure returns (bytes32) {
        return keccak256(abi.encode(SWAP_IMPACT_FACTOR, market, isPositive));
    }

    function swapImpactExponentFactor(address market) internal pure returns (bytes32) {
        return keccak256(abi.encode(SWAP_IMPACT_EXPONENT_FACTOR, market));
    }

    function swapImpactPoolAmount(address market, address token) internal pure returns (bytes32) {
        return keccak256(abi.encode(SWAP_IMPACT_POOL_AMOUNT, market, token));
    }
}

/// GMX's errors for deposits and withdrawals (Errors.sol's names and parameters).
library GmxLiquidityErrors {
    error EmptyDeposit();
    error EmptyWithdrawal();
    error EmptyDepositAmounts();
    error EmptyWithdrawalAmount();
    error MinMarketTokens(uint256 received, uint256 expected);
    error MinLongTokens(uint256 received, uint256 expected);
    error MinShortTokens(uint256 received, uint256 expected);
    error InvalidPoolValueForDeposit(int256 poolValue);
    error InvalidPoolValueForWithdrawal(int256 poolValue);
    error EmptyMarketTokenSupply();
    error DepositNotFound(bytes32 key);
    error SwapPriceImpactExceedsAmountIn(uint256 amountAfterFees, int256 negativeImpactAmount);
    error WithdrawalNotFound(bytes32 key);

    /// The cancellation's `reason`: the error's name for the liquidity errors, else as the orders name theirs.
    function nameOf(bytes memory reasonBytes) internal pure returns (string memory) {
        if (reasonBytes.length >= 4) {
            bytes4 s = bytes4(reasonBytes);
            if (s == MinMarketTokens.selector) return "MinMarketTokens";
            if (s == MinLongTokens.selector) return "MinLongTokens";
            if (s == MinShortTokens.selector) return "MinShortTokens";
            if (s == InvalidPoolValueForDeposit.selector) return "InvalidPoolValueForDeposit";
            if (s == InvalidPoolValueForWithdrawal.selector) return "InvalidPoolValueForWithdrawal";
            if (s == EmptyMarketTokenSupply.selector) return "EmptyMarketTokenSupply";
            if (s == SwapPriceImpactExceedsAmountIn.selector) return "SwapPriceImpactExceedsAmountIn";
            if (s == GmxErrors.InsufficientPoolAmount.selector) return "InsufficientPoolAmount";
        }
        return GmxErrors.nameOf(reasonBytes);
    }
}

/// The pool's value and the GM amounts of a deposit or a withdrawal, as GMX's MarketUtils/ExecuteDepositUtils/
/// ExecuteWithdrawalUtils define them (no swap price impact, no max PnL factor cap: README "Left out").
library GmxPool {
    uint256 internal constant GM_TO_FLOAT = 1e12;

    /// MarketUtils.getPoolValueInfo: the tokens' USD + the pool's share of pending borrowing fees (all of it: no
    /// fee receiver on the devnet) − the traders' net PnL − the position impact pool's value. `maximize` picks
    /// the prices that make the value larger (deposits) or smaller (withdrawals).
    function poolValueInfo(IGmxDataStore ds, GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory p, bool maximize)
        internal
        view
        returns (GmxLiquidityTypes.PoolValueInfo memory r)
    {
        r.longTokenAmount = GmxMath.poolAmount(ds, m.marketToken, m.longToken);
        r.shortTokenAmount = GmxMath.poolAmount(ds, m.marketToken, m.shortToken);
        r.longTokenUsd = r.longTokenAmount * (maximize ? p.longTokenPrice.max : p.longTokenPrice.min);
        r.shortTokenUsd = r.shortTokenAmount * (maximize ? p.shortTokenPrice.max : p.shortTokenPrice.min);
        r.totalBorrowingFees = pendingBorrowingFees(ds, m, p);
        r.impactPoolAmount = ds.getUint(GmxKeys.marketOnly(GmxKeys.POSITION_IMPACT_POOL_AMOUNT, m.marketToken));
        // The traders' PnL is taken at the prices that minimize it when the pool's value is maximized.
        r.longPnl = traderPnl(ds, m, maximize ? p.indexTokenPrice.min : p.indexTokenPrice.max, true);
        r.shortPnl = traderPnl(ds, m, maximize ? p.indexTokenPrice.max : p.indexTokenPrice.min, false);
        r.netPnl = r.longPnl + r.shortPnl;
        uint256 impactUsd = r.impactPoolAmount * (maximize ? p.indexTokenPrice.min : p.indexTokenPrice.max);
        r.poolValue = int256(r.longTokenUsd + r.shortTokenUsd + r.totalBorrowingFees) - r.netPnl - int256(impactUsd);
    }

    /// A side's open positions' PnL at `price`: long tokens × price − size, short the reverse.
    function traderPnl(IGmxDataStore ds, GmxTypes.MarketProps memory m, uint256 price, bool isLong) internal view returns (int256) {
        return GmxMath.positionPnlUsd(GmxMath.openInterest(ds, m, isLong), GmxMath.openInterestInTokens(ds, m, isLong), price, isLong);
    }

    /// The market's positions' borrowing fees not yet charged: size × (cumulative factor brought up to now − the
    /// position's snapshot), summed over POSITION_LIST (the devnet keeps no TOTAL_BORROWING).
    function pendingBorrowingFees(IGmxDataStore ds, GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory p) internal view returns (uint256 total) {
        uint256 count = ds.getBytes32Count(GmxKeys.POSITION_LIST);
        if (count == 0) return 0;
        uint256[2] memory cumulative = [GmxMath.nextCumulativeBorrowingFactor(ds, m, p, true), GmxMath.nextCumulativeBorrowingFactor(ds, m, p, false)];
        bytes32[] memory keys = ds.getBytes32ValuesAt(GmxKeys.POSITION_LIST, 0, count);
        for (uint256 i = 0; i < keys.length; i++) {
            GmxTypes.PositionProps memory pos = GmxStore.getPosition(ds, keys[i]);
            if (pos.addresses.market != m.marketToken) continue;
            uint256 c = cumulative[pos.flags.isLong ? 0 : 1];
            if (c > pos.numbers.borrowingFactor) total += GmxMath.applyFactor(pos.numbers.sizeInUsd, c - pos.numbers.borrowingFactor);
        }
    }

    /// MarketUtils.usdToMarketTokenAmount: 1 GM = $1 while there is no supply.
    function usdToMarketTokens(uint256 usd, uint256 poolValue, uint256 supply) internal pure returns (uint256) {
        if (supply == 0) return usd / GM_TO_FLOAT;
        return (usd * supply) / poolValue;
    }

    struct DepositOut {
        uint256 marketTokens;
        /// The whole deposit's swap price impact (USD, 30 decimals), split over the sides by their USD.
        int256 priceImpactUsd;
        bool balanceWasImproved;
        /// Per token (0 long, 1 short): the swap fee taken, what its POOL_AMOUNT gains (the amount after the
        /// negative impact, the fee, and a positive impact's tokens out of the swap impact pool), and the change of
        /// its SWAP_IMPACT_POOL_AMOUNT.
        uint256[2] fees;
        uint256[2] intoPool;
        int256[2] impactPoolDelta;
    }

    /// What ExecuteDepositUtils does with a deposit at these prices, per side: the fee of its swapPricingType
    /// (DEPOSIT_FEE_FACTOR(market, balanceWasImproved) as the keeper executes it, improved when the pool's long and short USD come closer) stays in
    /// the pool; the side's share of the swap price impact is taken into the swap impact pool (negative) or paid out of
    /// the other token's swap impact pool, as far as it holds, as extra GM (positive); GM minted = USD in at the token's
    /// min price × supply / pool value (maximized; 1 GM = $1 while the supply is 0).
    function depositOut(IGmxDataStore ds, GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory p, uint256 longAmount, uint256 shortAmount, uint256 swapPricingType)
        internal
        view
        returns (DepositOut memory o)
    {
        GmxLiquidityTypes.PoolValueInfo memory v = poolValueInfo(ds, m, p, true);
        DepositContext memory c;
        c.supply = IGmxMarketToken(m.marketToken).totalSupply();
        if (c.supply > 0 && v.poolValue <= 0) revert GmxLiquidityErrors.InvalidPoolValueForDeposit(v.poolValue);
        c.poolValue = v.poolValue > 0 ? uint256(v.poolValue) : 0;
        c.amounts = [longAmount, shortAmount];
        c.prices = [p.longTokenPrice, p.shortTokenPrice];
        c.tokens = [m.longToken, m.shortToken];
        uint256[2] memory poolUsd = [v.longTokenAmount * mid(p.longTokenPrice), v.shortTokenAmount * mid(p.shortTokenPrice)];
        c.usdIn = [longAmount * mid(p.longTokenPrice), shortAmount * mid(p.shortTokenPrice)];
        o.balanceWasImproved = absDiff(poolUsd[0] + c.usdIn[0], poolUsd[1] + c.usdIn[1]) < absDiff(poolUsd[0], poolUsd[1]);
        o.priceImpactUsd = swapImpactUsd(ds, m.marketToken, poolUsd, c.usdIn);
        c.feeFactor = ds.getUint(GmxLiquidityKeys.feeFactor(swapPricingType, m.marketToken, o.balanceWasImproved));
        for (uint256 i = 0; i < 2; i++) {
            if (c.amounts[i] > 0) depositSide(ds, m.marketToken, c, o, i);
        }
    }

    struct DepositContext {
        uint256 supply;
        uint256 poolValue;
        uint256 feeFactor;
        uint256[2] amounts;
        uint256[2] usdIn;
        GmxTypes.PriceProps[2] prices;
        address[2] tokens;
    }

    function depositSide(IGmxDataStore ds, address market, DepositContext memory c, DepositOut memory o, uint256 i) private view {
        o.fees[i] = GmxMath.applyFactor(c.amounts[i], c.feeFactor);
        uint256 afterFees = c.amounts[i] - o.fees[i];
        int256 impact = (o.priceImpactUsd * int256(c.usdIn[i])) / int256(c.usdIn[0] + c.usdIn[1]);
        if (impact > 0) {
            // Paid in the other token, out of its swap impact pool (what earlier sides left of it).
            uint256 j = 1 - i;
            uint256 available = uint256(int256(ds.getUint(GmxLiquidityKeys.swapImpactPoolAmount(market, c.tokens[j]))) + o.impactPoolDelta[j]);
            uint256 bonus = uint256(impact) / c.prices[j].max;
            if (bonus > available) bonus = available;
            o.impactPoolDelta[j] -= int256(bonus);
            o.intoPool[j] += bonus;
            o.marketTokens += usdToMarketTokens(bonus * c.prices[j].max, c.poolValue, c.supply);
        } else if (impact < 0) {
            // Rounded up, as GMX rounds a negative impact's magnitude.
            uint256 cost = (uint256(-impact) + c.prices[i].min - 1) / c.prices[i].min;
            if (cost > afterFees) revert GmxLiquidityErrors.SwapPriceImpactExceedsAmountIn(afterFees, -int256(cost));
            afterFees -= cost;
            o.impactPoolDelta[i] += int256(cost);
        }
        o.intoPool[i] += afterFees + o.fees[i];
        o.marketTokens += usdToMarketTokens(afterFees * c.prices[i].min, c.poolValue, c.supply);
    }

    /// SwapPricingUtils.getPriceImpactUsd for the pool's long and short USD moving by `usdIn`: factor ×
    /// (|imbalance before|^e − |imbalance after|^e), positive when the balance improves; when the imbalance changes
    /// side, the positive factor on the one before minus the negative factor on the one after.
    function swapImpactUsd(IGmxDataStore ds, address market, uint256[2] memory poolUsd, uint256[2] memory usdIn) internal view returns (int256) {
        uint256 e = ds.getUint(GmxLiquidityKeys.swapImpactExponentFactor(market));
        uint256 next0 = poolUsd[0] + usdIn[0];
        uint256 next1 = poolUsd[1] + usdIn[1];
        uint256 initialDiff = absDiff(poolUsd[0], poolUsd[1]);
        uint256 nextDiff = absDiff(next0, next1);
        uint256 positiveFactor = ds.getUint(GmxLiquidityKeys.swapImpactFactor(market, true));
        uint256 negativeFactor = ds.getUint(GmxLiquidityKeys.swapImpactFactor(market, false));
        if ((poolUsd[0] <= poolUsd[1]) == (next0 <= next1)) {
            bool positive = nextDiff < initialDiff;
            uint256 a = GmxMath.applyExponent(initialDiff, e);
            uint256 b = GmxMath.applyExponent(nextDiff, e);
            uint256 delta = GmxMath.applyFactor(a > b ? a - b : b - a, positive ? positiveFactor : negativeFactor);
            return positive ? int256(delta) : -int256(delta);
        }
        return int256(GmxMath.applyFactor(GmxMath.applyExponent(initialDiff, e), positiveFactor))
            - int256(GmxMath.applyFactor(GmxMath.applyExponent(nextDiff, e), negativeFactor));
    }

    function mid(GmxTypes.PriceProps memory price) internal pure returns (uint256) {
        return (price.min + price.max) / 2;
    }

    struct WithdrawalOut {
        uint256 longAmount;
        uint256 shortAmount;
        uint256 longFee;
        uint256 shortFee;
    }

    /// The tokens out for `marketTokens` GM (ExecuteWithdrawalUtils._getOutputAmounts): its USD (GM × pool value,
    /// minimized, / supply) split pro rata to the pool's long and short USD at max prices, each less the fee of its
    /// swapPricingType (WITHDRAWAL_FEE_FACTOR(market, false) as the keeper executes it), which stays in the pool.
    function withdrawalOut(IGmxDataStore ds, GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory p, uint256 marketTokens, uint256 swapPricingType)
        internal
        view
        returns (WithdrawalOut memory o)
    {
        (uint256 longGross, uint256 shortGross) = withdrawalGross(ds, m, p, marketTokens);
        uint256 factor = ds.getUint(GmxLiquidityKeys.feeFactor(swapPricingType, m.marketToken, false));
        o.longFee = GmxMath.applyFactor(longGross, factor);
        o.shortFee = GmxMath.applyFactor(shortGross, factor);
        o.longAmount = longGross - o.longFee;
        o.shortAmount = shortGross - o.shortFee;
    }

    /// The withdrawal's long and short tokens before its fee.
    function withdrawalGross(IGmxDataStore ds, GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory p, uint256 marketTokens)
        private
        view
        returns (uint256 longGross, uint256 shortGross)
    {
        uint256 supply = IGmxMarketToken(m.marketToken).totalSupply();
        if (supply == 0) revert GmxLiquidityErrors.EmptyMarketTokenSupply();
        GmxLiquidityTypes.PoolValueInfo memory v = poolValueInfo(ds, m, p, false);
        if (v.poolValue <= 0) revert GmxLiquidityErrors.InvalidPoolValueForWithdrawal(v.poolValue);
        uint256 usd = (marketTokens * uint256(v.poolValue)) / supply;
        uint256 longPoolUsd = v.longTokenAmount * p.longTokenPrice.max;
        uint256 shortPoolUsd = v.shortTokenAmount * p.shortTokenPrice.max;
        uint256 totalPoolUsd = longPoolUsd + shortPoolUsd;
        if (totalPoolUsd == 0) revert GmxLiquidityErrors.InvalidPoolValueForWithdrawal(v.poolValue);
        longGross = (usd * longPoolUsd) / totalPoolUsd / p.longTokenPrice.max;
        shortGross = (usd * shortPoolUsd) / totalPoolUsd / p.shortTokenPrice.max;
    }

    function absDiff(uint256 a, uint256 b) internal pure returns (uint256) {
        return a > b ? a - b : b - a;
    }
}

/// What both handlers do around an execution: the prices, the execution fee check, paying tokens out.
library GmxRequests {
    /// GasUtils.validateExecutionFee with a request's gas limit (DEPOSIT_GAS_LIMIT / WITHDRAWAL_GAS_LIMIT, no swaps:
    /// 3 oracle prices): (base + per-oracle-price × 3 + (limit + callback) × multiplier) × tx.gasprice.
    function validateExecutionFee(IGmxDataStore ds, bytes32 gasLimitKey, uint256 callbackGasLimit, uint256 executionFee) internal view {
        uint256 gasLimit = ds.getUint(GmxKeys.ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1) + ds.getUint(GmxKeys.ESTIMATED_GAS_FEE_PER_ORACLE_PRICE) * 3
            + GmxMath.applyFactor(ds.getUint(gasLimitKey) + callbackGasLimit, ds.getUint(GmxKeys.ESTIMATED_GAS_FEE_MULTIPLIER_FACTOR));
        uint256 minExecutionFee = gasLimit * tx.gasprice;
        if (executionFee < minExecutionFee) revert GmxErrors.InsufficientExecutionFee(minExecutionFee, executionFee);
    }

    /// The keeper's prices for the market's tokens: providers[i] the token's ORACLE_PROVIDER_FOR_TOKEN, data[i] =
    /// abi.encode(min, max, timestamp) with the timestamp not before the request's.
    function oraclePrices(IGmxDataStore ds, GmxTypes.MarketProps memory m, GmxLiquidityTypes.SetPricesParams calldata p, uint256 notBefore)
        internal
        view
        returns (GmxTypes.MarketPrices memory prices)
    {
        prices.indexTokenPrice = oraclePrice(ds, p, m.indexToken, notBefore);
        prices.longTokenPrice = oraclePrice(ds, p, m.longToken, notBefore);
        prices.shortTokenPrice = oraclePrice(ds, p, m.shortToken, notBefore);
    }

    function oraclePrice(IGmxDataStore ds, GmxLiquidityTypes.SetPricesParams calldata p, address token, uint256 notBefore)
        private
        view
        returns (GmxTypes.PriceProps memory price)
    {
        for (uint256 i = 0; i < p.tokens.length; i++) {
            if (p.tokens[i] != token) continue;
            address expected = ds.getAddress(GmxKeys.oracleProviderForToken(token));
            if (p.providers[i] != expected) revert GmxErrors.InvalidOracleProviderForToken(p.providers[i], expected);
            uint256 timestamp;
            (price.min, price.max, timestamp) = abi.decode(p.data[i], (uint256, uint256, uint256));
            if (timestamp < notBefore) revert GmxErrors.OracleTimestampsAreSmallerThanRequired(timestamp, notBefore);
            if (price.min == 0 || price.max < price.min) revert GmxErrors.EmptyPrimaryPrice(token);
            return price;
        }
        revert GmxErrors.EmptyPrimaryPrice(token);
    }

    function simulatedPrices(GmxTypes.MarketProps memory m, GmxLiquidityTypes.SimulatePricesParams memory p)
        internal
        pure
        returns (GmxTypes.MarketPrices memory prices)
    {
        prices.indexTokenPrice = simulatedPrice(p, m.indexToken);
        prices.longTokenPrice = simulatedPrice(p, m.longToken);
        prices.shortTokenPrice = simulatedPrice(p, m.shortToken);
    }

    function simulatedPrice(GmxLiquidityTypes.SimulatePricesParams memory p, address token) private pure returns (GmxTypes.PriceProps memory) {
        for (uint256 i = 0; i < p.primaryTokens.length; i++) {
            if (p.primaryTokens[i] == token) return p.primaryPrices[i];
        }
        revert GmxErrors.EmptyPrimaryPrice(token);
    }

    /// Pays `amount` of `token` out of a bank; WNT as native coin when the request asked for it.
    function sendOut(IGmxBank bank, address token, address wnt, address to, uint256 amount, bool unwrap) internal {
        if (amount == 0) return;
        if (unwrap && token == wnt) bank.transferOutNativeToken(to, amount);
        else bank.transferOut(token, to, amount);
    }

    /// GasUtils.payExecutionFee: the keeper gets (EXECUTION_GAS_FEE_BASE_AMOUNT_V2_1 + gas used × the multiplier)
    /// × tx.gasprice, at most the fee; `refundTo` the rest, both as native coin.
    function payExecutionFee(IGmxDataStore ds, IGmxBank vault, uint256 executionFee, uint256 startingGas, address keeper, address refundTo) internal {
        uint256 gasUsed = startingGas - gasleft();
        uint256 multiplier = ds.getUint(GmxKeys.EXECUTION_GAS_FEE_MULTIPLIER_FACTOR);
        uint256 keeperGas = ds.getUint(GmxKeys.EXECUTION_GAS_FEE_BASE_AMOUNT_V2_1) + (multiplier == 0 ? gasUsed : GmxMath.applyFactor(gasUsed, multiplier));
        uint256 keeperFee = keeperGas * tx.gasprice;
        if (keeperFee > executionFee) keeperFee = executionFee;
        vault.transferOutNativeToken(keeper, keeperFee);
        vault.transferOutNativeToken(refundTo, executionFee - keeperFee);
    }

    /// RequestNotYetCancellable until REQUEST_EXPIRATION_TIME has passed since the request's updatedAtTime.
    function validateCancellable(IGmxDataStore ds, uint256 updatedAt, string memory requestType) internal view {
        uint256 expiration = ds.getUint(GmxKeys.REQUEST_EXPIRATION_TIME);
        if (block.timestamp < updatedAt + expiration) revert GmxErrors.RequestNotYetCancellable(block.timestamp - updatedAt, expiration, requestType);
    }
}

/// DepositStoreUtils.get, shared by the DepositHandler and the Reader's liquidity facet.
library GmxDepositStore {
    function get(IGmxDataStore ds, bytes32 key) internal view returns (GmxLiquidityTypes.DepositProps memory d) {
        d.addresses.longTokenSwapPath = new address[](0);
        d.addresses.shortTokenSwapPath = new address[](0);
        d._dataList = new bytes32[](0);
        if (!ds.containsBytes32(GmxLiquidityKeys.DEPOSIT_LIST, key)) return d;
        d.addresses.account = ds.getAddress(GmxKeys.field(key, GmxFields.ACCOUNT));
        d.addresses.receiver = ds.getAddress(GmxKeys.field(key, GmxFields.RECEIVER));
        d.addresses.callbackContract = ds.getAddress(GmxKeys.field(key, GmxFields.CALLBACK_CONTRACT));
        d.addresses.uiFeeReceiver = ds.getAddress(GmxKeys.field(key, GmxFields.UI_FEE_RECEIVER));
        d.addresses.market = ds.getAddress(GmxKeys.field(key, GmxFields.MARKET));
        d.addresses.initialLongToken = ds.getAddress(GmxKeys.field(key, GmxLiquidityKeys.INITIAL_LONG_TOKEN));
        d.addresses.initialShortToken = ds.getAddress(GmxKeys.field(key, GmxLiquidityKeys.INITIAL_SHORT_TOKEN));
        d.numbers.initialLongTokenAmount = ds.getUint(GmxKeys.field(key, GmxLiquidityKeys.INITIAL_LONG_TOKEN_AMOUNT));
        d.numbers.initialShortTokenAmount = ds.getUint(GmxKeys.field(key, GmxLiquidityKeys.INITIAL_SHORT_TOKEN_AMOUNT));
        d.numbers.minMarketTokens = ds.getUint(GmxKeys.field(key, GmxLiquidityKeys.MIN_MARKET_TOKENS));
        d.numbers.updatedAtTime = ds.getUint(GmxKeys.field(key, GmxFields.UPDATED_AT_TIME));
        d.numbers.executionFee = ds.getUint(GmxKeys.field(key, GmxFields.EXECUTION_FEE));
        d.numbers.callbackGasLimit = ds.getUint(GmxKeys.field(key, GmxFields.CALLBACK_GAS_LIMIT));
        d.flags.shouldUnwrapNativeToken = ds.getBool(GmxKeys.field(key, GmxFields.SHOULD_UNWRAP_NATIVE_TOKEN));
    }
}

/// WithdrawalStoreUtils.get, shared by the WithdrawalHandler and the Reader's liquidity facet.
library GmxWithdrawalStore {
    function get(IGmxDataStore ds, bytes32 key) internal view returns (GmxLiquidityTypes.WithdrawalProps memory w) {
        w.addresses.longTokenSwapPath = new address[](0);
        w.addresses.shortTokenSwapPath = new address[](0);
        w._dataList = new bytes32[](0);
        if (!ds.containsBytes32(GmxLiquidityKeys.WITHDRAWAL_LIST, key)) return w;
        w.addresses.account = ds.getAddress(GmxKeys.field(key, GmxFields.ACCOUNT));
        w.addresses.receiver = ds.getAddress(GmxKeys.field(key, GmxFields.RECEIVER));
        w.addresses.callbackContract = ds.getAddress(GmxKeys.field(key, GmxFields.CALLBACK_CONTRACT));
        w.addresses.uiFeeReceiver = ds.getAddress(GmxKeys.field(key, GmxFields.UI_FEE_RECEIVER));
        w.addresses.market = ds.getAddress(GmxKeys.field(key, GmxFields.MARKET));
        w.numbers.marketTokenAmount = ds.getUint(GmxKeys.field(key, GmxLiquidityKeys.MARKET_TOKEN_AMOUNT));
        w.numbers.minLongTokenAmount = ds.getUint(GmxKeys.field(key, GmxLiquidityKeys.MIN_LONG_TOKEN_AMOUNT));
        w.numbers.minShortTokenAmount = ds.getUint(GmxKeys.field(key, GmxLiquidityKeys.MIN_SHORT_TOKEN_AMOUNT));
        w.numbers.updatedAtTime = ds.getUint(GmxKeys.field(key, GmxFields.UPDATED_AT_TIME));
        w.numbers.executionFee = ds.getUint(GmxKeys.field(key, GmxFields.EXECUTION_FEE));
        w.numbers.callbackGasLimit = ds.getUint(GmxKeys.field(key, GmxFields.CALLBACK_GAS_LIMIT));
        w.flags.shouldUnwrapNativeToken = ds.getBool(GmxKeys.field(key, GmxFields.SHOULD_UNWRAP_NATIVE_TOKEN));
    }
}
