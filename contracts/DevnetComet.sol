// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @notice A Compound v3 (Comet) market for the devnet, written for it: Comet ships no bytecode on npm. It is
/// ABI-compatible with the real Comet for what a lending client calls, so a client written against the real
/// Comet ABI works unchanged: `supply`/`supplyTo`/`withdraw`/`withdrawTo` of the base asset (supply repays
/// debt first, withdraw takes the supplied balance first and then borrows) and of collateral assets, the
/// balance and account views, the kink interest rate model with supply and borrow indices (principal vs
/// present value, as Comet keeps them), `getAssetInfo`, `getPrice`, the health checks, Comet's events and
/// its custom error names.
/// It is NOT Comet: no absorb/liquidation, no buyCollateral, no rewards tracking (the tracking fields of
/// `userBasic` and `totalsBasic` stay 0), no allow/allowBySig/supplyFrom/withdrawFrom, no base or collateral
/// transfers, no governor, pause guardian (nothing is ever paused), reserves withdrawal or proxy. Its
/// configuration is fixed at construction. It holds faucet tokens on a devnet and is worth nothing.
contract DevnetComet {
    // ---- The real Comet's structs, field for field (clients decode them) ----

    struct AssetInfo {
        uint8 offset;
        address asset;
        address priceFeed;
        uint64 scale;
        uint64 borrowCollateralFactor;
        uint64 liquidateCollateralFactor;
        uint64 liquidationFactor;
        uint128 supplyCap;
    }

    struct TotalsBasic {
        uint64 baseSupplyIndex;
        uint64 baseBorrowIndex;
        uint64 trackingSupplyIndex;
        uint64 trackingBorrowIndex;
        uint104 totalSupplyBase;
        uint104 totalBorrowBase;
        uint40 lastAccrualTime;
        uint8 pauseFlags;
    }

    struct TotalsCollateral {
        uint128 totalSupplyAsset;
        uint128 _reserved;
    }

    struct UserBasic {
        int104 principal;
        uint64 baseTrackingIndex;
        uint64 baseTrackingAccrued;
        uint16 assetsIn;
        uint8 _reserved;
    }

    struct UserCollateral {
        uint128 balance;
        uint128 _reserved;
    }

    // ---- Construction parameters (rates per year, factors scaled 1e18, as in Comet's configuration) ----

    struct AssetConfig {
        address asset;
        address priceFeed;
        uint8 decimals;
        uint64 borrowCollateralFactor;
        uint64 liquidateCollateralFactor;
        uint64 liquidationFactor;
        uint128 supplyCap;
    }

    struct Configuration {
        string name;
        string symbol;
        address baseToken;
        address baseTokenPriceFeed;
        uint104 baseBorrowMin;
        uint64 supplyKink;
        uint64 supplyPerYearInterestRateSlopeLow;
        uint64 supplyPerYearInterestRateSlopeHigh;
        uint64 supplyPerYearInterestRateBase;
        uint64 borrowKink;
        uint64 borrowPerYearInterestRateSlopeLow;
        uint64 borrowPerYearInterestRateSlopeHigh;
        uint64 borrowPerYearInterestRateBase;
        AssetConfig[] assetConfigs;
    }

    // ---- Errors and events: the real Comet's names and signatures ----

    error BadAsset();
    error BadDecimals();
    error BadPrice();
    error BorrowCFTooLarge();
    error BorrowTooSmall();
    error LiquidateCFTooLarge();
    error NotCollateralized();
    error ReentrantCallBlocked();
    error SupplyCapExceeded();
    error TimestampTooLarge();
    error TooManyAssets();
    error TransferInFailed();
    error TransferOutFailed();
    error InvalidUInt64();
    error InvalidUInt104();
    error InvalidUInt128();
    error InvalidInt104();
    error InvalidInt256();

    event Supply(address indexed from, address indexed dst, uint256 amount);
    event Transfer(address indexed from, address indexed to, uint256 amount);
    event Withdraw(address indexed src, address indexed to, uint256 amount);
    event SupplyCollateral(address indexed from, address indexed dst, address indexed asset, uint256 amount);
    event WithdrawCollateral(address indexed src, address indexed to, address indexed asset, uint256 amount);

    uint64 private constant FACTOR_SCALE = 1e18;
    uint64 private constant BASE_INDEX_SCALE = 1e15;
    uint8 private constant PRICE_FEED_DECIMALS = 8;
    uint64 private constant SECONDS_PER_YEAR = 365 days;
    /// assetsIn is a 16-bit set; Comet caps the list at 15 too.
    uint8 private constant MAX_ASSETS = 15;

    // ---- Configuration ----

    string public name;
    string public symbol;
    address public immutable baseToken;
    address public immutable baseTokenPriceFeed;
    uint8 public immutable decimals;
    uint256 public immutable baseScale;
    uint256 public immutable baseBorrowMin;
    uint8 public immutable numAssets;

    // Per-second rates (1e18 = 100 %): Comet stores the yearly configuration divided by SECONDS_PER_YEAR.
    uint256 public immutable supplyKink;
    uint256 public immutable supplyPerSecondInterestRateSlopeLow;
    uint256 public immutable supplyPerSecondInterestRateSlopeHigh;
    uint256 public immutable supplyPerSecondInterestRateBase;
    uint256 public immutable borrowKink;
    uint256 public immutable borrowPerSecondInterestRateSlopeLow;
    uint256 public immutable borrowPerSecondInterestRateSlopeHigh;
    uint256 public immutable borrowPerSecondInterestRateBase;

    /// Collateral assets, in two slots each: what a health check needs (asset, borrow CF, decimals; feed,
    /// liquidate CF) is read from two slots, the rest only by the asset info views and supply.
    struct StoredAsset {
        address asset;
        uint64 borrowCollateralFactor;
        uint8 decimals;
        address priceFeed;
        uint64 liquidateCollateralFactor;
        uint128 supplyCap;
        uint64 liquidationFactor;
    }

    StoredAsset[] private _assets;
    /// asset => offset + 1 (0: not a collateral asset of this market).
    mapping(address => uint256) private _assetSlot;

    // ---- State (the same aggregates as Comet's, in two slots; the tracking indices stay 0) ----

    uint64 internal baseSupplyIndex;
    uint64 internal baseBorrowIndex;
    uint64 internal trackingSupplyIndex;
    uint64 internal trackingBorrowIndex;
    uint104 internal totalSupplyBase;
    uint104 internal totalBorrowBase;
    uint40 internal lastAccrualTime;
    uint8 internal pauseFlags;

    mapping(address => TotalsCollateral) public totalsCollateral;
    mapping(address => UserBasic) public userBasic;
    mapping(address => mapping(address => UserCollateral)) public userCollateral;

    bool private transient _entered;

    modifier nonReentrant() {
        if (_entered) revert ReentrantCallBlocked();
        _entered = true;
        _;
        _entered = false;
    }

    constructor(Configuration memory config) {
        uint8 baseDecimals = _decimalsOf(config.baseToken);
        // Comet's limits: at most 18 decimals, and at least 6 (its reward accrual scale).
        if (baseDecimals > 18 || baseDecimals < 6) revert BadDecimals();
        if (_decimalsOf(config.baseTokenPriceFeed) != PRICE_FEED_DECIMALS) revert BadDecimals();
        if (config.assetConfigs.length > MAX_ASSETS) revert TooManyAssets();

        name = config.name;
        symbol = config.symbol;
        baseToken = config.baseToken;
        baseTokenPriceFeed = config.baseTokenPriceFeed;
        decimals = baseDecimals;
        baseScale = 10 ** baseDecimals;
        baseBorrowMin = config.baseBorrowMin;

        supplyKink = config.supplyKink;
        supplyPerSecondInterestRateSlopeLow = config.supplyPerYearInterestRateSlopeLow / SECONDS_PER_YEAR;
        supplyPerSecondInterestRateSlopeHigh = config.supplyPerYearInterestRateSlopeHigh / SECONDS_PER_YEAR;
        supplyPerSecondInterestRateBase = config.supplyPerYearInterestRateBase / SECONDS_PER_YEAR;
        borrowKink = config.borrowKink;
        borrowPerSecondInterestRateSlopeLow = config.borrowPerYearInterestRateSlopeLow / SECONDS_PER_YEAR;
        borrowPerSecondInterestRateSlopeHigh = config.borrowPerYearInterestRateSlopeHigh / SECONDS_PER_YEAR;
        borrowPerSecondInterestRateBase = config.borrowPerYearInterestRateBase / SECONDS_PER_YEAR;

        numAssets = uint8(config.assetConfigs.length);
        for (uint256 i = 0; i < config.assetConfigs.length; i++) {
            AssetConfig memory a = config.assetConfigs[i];
            if (a.asset == address(0) || a.asset == config.baseToken || _assetSlot[a.asset] != 0) revert BadAsset();
            if (_decimalsOf(a.priceFeed) != PRICE_FEED_DECIMALS || _decimalsOf(a.asset) != a.decimals) revert BadDecimals();
            if (a.decimals > 18) revert BadDecimals();
            if (a.borrowCollateralFactor >= a.liquidateCollateralFactor) revert BorrowCFTooLarge();
            if (a.liquidateCollateralFactor > FACTOR_SCALE) revert LiquidateCFTooLarge();
            _assets.push(
                StoredAsset({
                    asset: a.asset,
                    borrowCollateralFactor: a.borrowCollateralFactor,
                    decimals: a.decimals,
                    priceFeed: a.priceFeed,
                    liquidateCollateralFactor: a.liquidateCollateralFactor,
                    supplyCap: a.supplyCap,
                    liquidationFactor: a.liquidationFactor
                })
            );
            _assetSlot[a.asset] = i + 1;
        }

        baseSupplyIndex = BASE_INDEX_SCALE;
        baseBorrowIndex = BASE_INDEX_SCALE;
        lastAccrualTime = _now();
    }

    // ---- Supply and withdraw ----

    /// @notice Supplies `amount` of `asset` for the caller: the base asset repays debt first, then supplies;
    /// `type(uint256).max` of the base asset repays the whole borrow. Any other asset is collateral.
    function supply(address asset, uint256 amount) external {
        _supply(msg.sender, msg.sender, asset, amount);
    }

    function supplyTo(address dst, address asset, uint256 amount) external {
        _supply(msg.sender, dst, asset, amount);
    }

    /// @notice Withdraws `amount` of `asset` to the caller: the base asset comes from the supplied balance
    /// first, the rest is borrowed (at least `baseBorrowMin`, collateralized); `type(uint256).max` of the base
    /// asset withdraws the whole supplied balance. Collateral may leave only while the borrow stays collateralized.
    function withdraw(address asset, uint256 amount) external {
        _withdraw(msg.sender, msg.sender, asset, amount);
    }

    function withdrawTo(address to, address asset, uint256 amount) external {
        _withdraw(msg.sender, to, asset, amount);
    }

    /// @notice Brings the market's indices up to now (the account's own figures follow from them: no rewards here).
    function accrueAccount(address) external {
        _accrue();
    }

    // ---- Views ----

    /// @notice The account's supplied base, with interest to now.
    function balanceOf(address account) public view returns (uint256) {
        int104 principal = userBasic[account].principal;
        if (principal <= 0) return 0;
        (uint64 supplyIndex, ) = _indicesNow();
        return _presentSupply(supplyIndex, uint104(principal));
    }

    /// @notice The account's borrowed base, with interest to now.
    function borrowBalanceOf(address account) public view returns (uint256) {
        int104 principal = userBasic[account].principal;
        if (principal >= 0) return 0;
        (, uint64 borrowIndex) = _indicesNow();
        return _presentBorrow(borrowIndex, uint104(-principal));
    }

    function collateralBalanceOf(address account, address asset) external view returns (uint128) {
        return userCollateral[account][asset].balance;
    }

    function totalSupply() external view returns (uint256) {
        (uint64 supplyIndex, ) = _indicesNow();
        return _presentSupply(supplyIndex, totalSupplyBase);
    }

    function totalBorrow() external view returns (uint256) {
        (, uint64 borrowIndex) = _indicesNow();
        return _presentBorrow(borrowIndex, totalBorrowBase);
    }

    function totalsBasic() external view returns (TotalsBasic memory) {
        return TotalsBasic(
            baseSupplyIndex, baseBorrowIndex, trackingSupplyIndex, trackingBorrowIndex,
            totalSupplyBase, totalBorrowBase, lastAccrualTime, pauseFlags
        );
    }

    /// @notice Borrows over supply, scaled 1e18, at the last accrual's indices (as Comet: no accrual first).
    function getUtilization() public view returns (uint256) {
        uint256 supplied = _presentSupply(baseSupplyIndex, totalSupplyBase);
        if (supplied == 0) return 0;
        return (_presentBorrow(baseBorrowIndex, totalBorrowBase) * FACTOR_SCALE) / supplied;
    }

    /// @notice The per-second supply rate at `utilization` (1e18 = 100 %): base + slopeLow up to the kink, slopeHigh beyond.
    function getSupplyRate(uint256 utilization) public view returns (uint64) {
        return _kinkRate(
            utilization, supplyKink, supplyPerSecondInterestRateBase,
            supplyPerSecondInterestRateSlopeLow, supplyPerSecondInterestRateSlopeHigh
        );
    }

    function getBorrowRate(uint256 utilization) public view returns (uint64) {
        return _kinkRate(
            utilization, borrowKink, borrowPerSecondInterestRateBase,
            borrowPerSecondInterestRateSlopeLow, borrowPerSecondInterestRateSlopeHigh
        );
    }

    /// @notice A feed's latest answer (8 decimals, USD); BadPrice unless positive.
    function getPrice(address priceFeed) public view returns (uint256) {
        (bool ok, bytes memory ret) = priceFeed.staticcall(abi.encodeWithSignature("latestRoundData()"));
        if (!ok || ret.length < 160) revert BadPrice();
        (, int256 answer, , , ) = abi.decode(ret, (uint80, int256, uint256, uint256, uint80));
        if (answer <= 0) revert BadPrice();
        return uint256(answer);
    }

    function getAssetInfo(uint8 i) public view returns (AssetInfo memory) {
        if (i >= numAssets) revert BadAsset();
        StoredAsset storage a = _assets[i];
        return AssetInfo({
            offset: i,
            asset: a.asset,
            priceFeed: a.priceFeed,
            scale: uint64(10 ** a.decimals),
            borrowCollateralFactor: a.borrowCollateralFactor,
            liquidateCollateralFactor: a.liquidateCollateralFactor,
            liquidationFactor: a.liquidationFactor,
            supplyCap: a.supplyCap
        });
    }

    function getAssetInfoByAddress(address asset) public view returns (AssetInfo memory) {
        uint256 slot = _assetSlot[asset];
        if (slot == 0) revert BadAsset();
        return getAssetInfo(uint8(slot - 1));
    }

    /// @notice Whether the account's borrow (if any) is within its collateral's borrow capacity. Like Comet,
    /// at the last accrual's borrow index.
    function isBorrowCollateralized(address account) public view returns (bool) {
        return _liquidity(account, false) >= 0;
    }

    /// @notice Whether the account's borrow exceeds its collateral's liquidation threshold.
    function isLiquidatable(address account) public view returns (bool) {
        return _liquidity(account, true) < 0;
    }

    /// Nothing can pause this market; these answer as the real ones do when nothing is paused.
    function isSupplyPaused() external pure returns (bool) {
        return false;
    }

    function isWithdrawPaused() external pure returns (bool) {
        return false;
    }

    function baseIndexScale() external pure returns (uint64) {
        return BASE_INDEX_SCALE;
    }

    function factorScale() external pure returns (uint64) {
        return FACTOR_SCALE;
    }

    function priceScale() external pure returns (uint64) {
        return uint64(10 ** PRICE_FEED_DECIMALS);
    }

    // ---- Internals ----

    function _supply(address from, address dst, address asset, uint256 amount) private nonReentrant {
        if (asset == baseToken) {
            if (amount == type(uint256).max) amount = borrowBalanceOf(dst);
            _supplyBase(from, dst, amount);
        } else {
            _supplyCollateral(from, dst, asset, _to128(amount));
        }
    }

    function _withdraw(address src, address to, address asset, uint256 amount) private nonReentrant {
        if (asset == baseToken) {
            if (amount == type(uint256).max) amount = balanceOf(src);
            _withdrawBase(src, to, amount);
        } else {
            _withdrawCollateral(src, to, asset, _to128(amount));
        }
    }

    function _supplyBase(address from, address dst, uint256 amount) private {
        _transferIn(baseToken, from, amount);
        _accrue();
        int104 before = userBasic[dst].principal;
        int104 next = _principalOf(_presentValue(before) + _toInt256(amount));
        // Principal moving up: first out of debt (repaid), then into supply (supplied).
        uint104 repaid;
        uint104 supplied;
        if (next > before) {
            if (before >= 0) supplied = uint104(next - before);
            else if (next <= 0) repaid = uint104(next - before);
            else (repaid, supplied) = (uint104(-before), uint104(next));
        }
        totalSupplyBase += supplied;
        totalBorrowBase -= repaid;
        userBasic[dst].principal = next;
        emit Supply(from, dst, amount);
        if (supplied > 0) emit Transfer(address(0), dst, _presentSupply(baseSupplyIndex, supplied));
    }

    function _withdrawBase(address src, address to, uint256 amount) private {
        _accrue();
        int104 before = userBasic[src].principal;
        int256 balance = _presentValue(before) - _toInt256(amount);
        int104 next = _principalOf(balance);
        // Principal moving down: first out of supply (withdrawn), then into debt (borrowed).
        uint104 withdrawn;
        uint104 borrowed;
        if (next < before) {
            if (before <= 0) borrowed = uint104(before - next);
            else if (next >= 0) withdrawn = uint104(before - next);
            else (withdrawn, borrowed) = (uint104(before), uint104(-next));
        }
        totalSupplyBase -= withdrawn;
        totalBorrowBase += borrowed;
        userBasic[src].principal = next;
        if (balance < 0) {
            if (uint256(-balance) < baseBorrowMin) revert BorrowTooSmall();
            if (!isBorrowCollateralized(src)) revert NotCollateralized();
        }
        _transferOut(baseToken, to, amount);
        emit Withdraw(src, to, amount);
        if (withdrawn > 0) emit Transfer(src, address(0), _presentSupply(baseSupplyIndex, withdrawn));
    }

    function _supplyCollateral(address from, address dst, address asset, uint128 amount) private {
        uint256 slot = _assetSlot[asset];
        if (slot == 0) revert BadAsset();
        _transferIn(asset, from, amount);
        uint128 total = totalsCollateral[asset].totalSupplyAsset + amount;
        if (total > _assets[slot - 1].supplyCap) revert SupplyCapExceeded();
        totalsCollateral[asset].totalSupplyAsset = total;
        uint128 before = userCollateral[dst][asset].balance;
        userCollateral[dst][asset].balance = before + amount;
        if (before == 0 && amount != 0) userBasic[dst].assetsIn |= uint16(1 << (slot - 1));
        emit SupplyCollateral(from, dst, asset, amount);
    }

    function _withdrawCollateral(address src, address to, address asset, uint128 amount) private {
        uint256 slot = _assetSlot[asset];
        if (slot == 0) revert BadAsset();
        uint128 next = userCollateral[src][asset].balance - amount;
        userCollateral[src][asset].balance = next;
        totalsCollateral[asset].totalSupplyAsset -= amount;
        if (next == 0) userBasic[src].assetsIn &= ~uint16(1 << (slot - 1));
        // No accrual first, as in Comet: the gap between the borrow and liquidate factors absorbs it.
        if (!isBorrowCollateralized(src)) revert NotCollateralized();
        _transferOut(asset, to, amount);
        emit WithdrawCollateral(src, to, asset, amount);
    }

    /// The account's base balance plus its collateral at the borrow (or liquidate) factors, in USD with
    /// 8 decimals; an account without debt is never short, whatever its prices.
    function _liquidity(address account, bool atLiquidateFactor) private view returns (int256) {
        UserBasic memory basic = userBasic[account];
        if (basic.principal >= 0) return 0;
        int256 liquidity = (_presentValue(basic.principal) * _toInt256(getPrice(baseTokenPriceFeed))) / _toInt256(baseScale);
        for (uint256 i = 0; i < numAssets; i++) {
            if (basic.assetsIn & (1 << i) == 0) continue;
            StoredAsset storage a = _assets[i];
            uint256 value = (uint256(userCollateral[account][a.asset].balance) * getPrice(a.priceFeed)) / 10 ** a.decimals;
            uint256 factor = atLiquidateFactor ? a.liquidateCollateralFactor : a.borrowCollateralFactor;
            liquidity += _toInt256((value * factor) / FACTOR_SCALE);
        }
        return liquidity;
    }

    function _kinkRate(uint256 utilization, uint256 kink, uint256 base, uint256 slopeLow, uint256 slopeHigh)
        private
        pure
        returns (uint64)
    {
        if (utilization <= kink) return _to64(base + (slopeLow * utilization) / FACTOR_SCALE);
        return _to64(base + (slopeLow * kink) / FACTOR_SCALE + (slopeHigh * (utilization - kink)) / FACTOR_SCALE);
    }

    /// The indices as they would be after an accrual now: index += index * rate * elapsed.
    function _indicesNow() private view returns (uint64 supplyIndex, uint64 borrowIndex) {
        supplyIndex = baseSupplyIndex;
        borrowIndex = baseBorrowIndex;
        uint256 elapsed = _now() - lastAccrualTime;
        if (elapsed > 0) {
            uint256 utilization = getUtilization();
            supplyIndex += _to64((uint256(supplyIndex) * getSupplyRate(utilization) * elapsed) / FACTOR_SCALE);
            borrowIndex += _to64((uint256(borrowIndex) * getBorrowRate(utilization) * elapsed) / FACTOR_SCALE);
        }
    }

    function _accrue() private {
        uint40 now_ = _now();
        if (now_ == lastAccrualTime) return;
        (baseSupplyIndex, baseBorrowIndex) = _indicesNow();
        lastAccrualTime = now_;
    }

    function _now() private view returns (uint40) {
        if (block.timestamp >= 2 ** 40) revert TimestampTooLarge();
        return uint40(block.timestamp);
    }

    // Principal <-> present value. Supply rounds down and debt rounds up, so rounding never favours the account.

    function _presentValue(int104 principal) private view returns (int256) {
        if (principal >= 0) return _toInt256(_presentSupply(baseSupplyIndex, uint104(principal)));
        return -_toInt256(_presentBorrow(baseBorrowIndex, uint104(-principal)));
    }

    function _principalOf(int256 presentValue) private view returns (int104) {
        if (presentValue >= 0) return _toInt104(_to104((uint256(presentValue) * BASE_INDEX_SCALE) / baseSupplyIndex));
        uint256 debt = uint256(-presentValue);
        return -_toInt104(_to104((debt * BASE_INDEX_SCALE + baseBorrowIndex - 1) / baseBorrowIndex));
    }

    function _presentSupply(uint64 index, uint104 principal) private pure returns (uint256) {
        return (uint256(principal) * index) / BASE_INDEX_SCALE;
    }

    function _presentBorrow(uint64 index, uint104 principal) private pure returns (uint256) {
        return (uint256(principal) * index) / BASE_INDEX_SCALE;
    }

    // ERC-20 calls that accept tokens returning nothing (USDT-style) and pass a token's own revert on unchanged.

    function _transferIn(address token, address from, uint256 amount) private {
        if (!_callToken(token, abi.encodeWithSignature("transferFrom(address,address,uint256)", from, address(this), amount))) {
            revert TransferInFailed();
        }
    }

    function _transferOut(address token, address to, uint256 amount) private {
        if (!_callToken(token, abi.encodeWithSignature("transfer(address,uint256)", to, amount))) revert TransferOutFailed();
    }

    function _callToken(address token, bytes memory data) private returns (bool) {
        (bool ok, bytes memory ret) = token.call(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 32), mload(ret))
            }
        }
        return ret.length == 0 ? token.code.length > 0 : ret.length == 32 && abi.decode(ret, (bool));
    }

    function _decimalsOf(address target) private view returns (uint8) {
        (bool ok, bytes memory ret) = target.staticcall(abi.encodeWithSignature("decimals()"));
        if (!ok || ret.length != 32) revert BadDecimals();
        uint256 d = abi.decode(ret, (uint256));
        if (d > type(uint8).max) revert BadDecimals();
        return uint8(d);
    }

    // Narrowing with Comet's error names.

    function _to64(uint256 n) private pure returns (uint64) {
        if (n > type(uint64).max) revert InvalidUInt64();
        return uint64(n);
    }

    function _to104(uint256 n) private pure returns (uint104) {
        if (n > type(uint104).max) revert InvalidUInt104();
        return uint104(n);
    }

    function _to128(uint256 n) private pure returns (uint128) {
        if (n > type(uint128).max) revert InvalidUInt128();
        return uint128(n);
    }

    function _toInt104(uint104 n) private pure returns (int104) {
        if (n > uint104(type(int104).max)) revert InvalidInt104();
        return int104(n);
    }

    function _toInt256(uint256 n) private pure returns (int256) {
        if (n > uint256(type(int256).max)) revert InvalidInt256();
        return int256(n);
    }
}
