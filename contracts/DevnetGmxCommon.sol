// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

/// @notice What the devnet's GMX v2 contracts share (src/devnet/protocols/gmxV2/README.md): GMX's key scheme
/// (Keys.sol: keccak256(abi.encode("NAME")), composite keys keccak256(abi.encode(BASE, ...))), its store layouts
/// (OrderStoreUtils/PositionStoreUtils/MarketStoreUtils: keccak256(abi.encode(key, FIELD))), its event data
/// struct and custom errors, and the market math (fees, funding, borrowing, price impact). Written for the
/// devnet from GMX's documented semantics; no GMX code is copied.

interface IGmxRoleStore {
    function hasRole(address account, bytes32 roleKey) external view returns (bool);
}

interface IGmxDataStore {
    function roleStore() external view returns (address);
    function getUint(bytes32 key) external view returns (uint256);
    function getInt(bytes32 key) external view returns (int256);
    function getAddress(bytes32 key) external view returns (address);
    function getBool(bytes32 key) external view returns (bool);
    function setUint(bytes32 key, uint256 value) external returns (uint256);
    function setInt(bytes32 key, int256 value) external returns (int256);
    function setAddress(bytes32 key, address value) external returns (address);
    function setBool(bytes32 key, bool value) external returns (bool);
    function incrementUint(bytes32 key, uint256 value) external returns (uint256);
    function applyDeltaToUint(bytes32 key, int256 value, string memory errorMessage) external returns (uint256);
    function containsBytes32(bytes32 setKey, bytes32 value) external view returns (bool);
    function getBytes32Count(bytes32 setKey) external view returns (uint256);
    function getBytes32ValuesAt(bytes32 setKey, uint256 start, uint256 end) external view returns (bytes32[] memory);
    function addBytes32(bytes32 setKey, bytes32 value) external;
    function removeBytes32(bytes32 setKey, bytes32 value) external;
    function getAddressCount(bytes32 setKey) external view returns (uint256);
    function getAddressValuesAt(bytes32 setKey, uint256 start, uint256 end) external view returns (address[] memory);
    function containsAddress(bytes32 setKey, address value) external view returns (bool);
}

interface IGmxBank {
    function recordTransferIn(address token) external returns (uint256);
    function transferOut(address token, address receiver, uint256 amount) external;
    function transferOutNativeToken(address receiver, uint256 amount) external;
}

interface IGmxErc20 {
    function balanceOf(address) external view returns (uint256);
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

interface IGmxWeth is IGmxErc20 {
    function deposit() external payable;
    function withdraw(uint256 amount) external;
}

/// GMX's structs, field for field as the ABI has them.
library GmxTypes {
    struct PriceProps {
        uint256 min;
        uint256 max;
    }

    struct MarketProps {
        address marketToken;
        address indexToken;
        address longToken;
        address shortToken;
    }

    struct MarketPrices {
        PriceProps indexTokenPrice;
        PriceProps longTokenPrice;
        PriceProps shortTokenPrice;
    }

    struct OrderAddresses {
        address account;
        address receiver;
        address cancellationReceiver;
        address callbackContract;
        address uiFeeReceiver;
        address market;
        address initialCollateralToken;
        address[] swapPath;
    }

    struct OrderNumbers {
        uint8 orderType;
        uint8 decreasePositionSwapType;
        uint256 sizeDeltaUsd;
        uint256 initialCollateralDeltaAmount;
        uint256 triggerPrice;
        uint256 acceptablePrice;
        uint256 executionFee;
        uint256 callbackGasLimit;
        uint256 minOutputAmount;
        uint256 updatedAtTime;
        uint256 validFromTime;
        uint256 srcChainId;
    }

    struct OrderFlags {
        bool isLong;
        bool shouldUnwrapNativeToken;
        bool isFrozen;
        bool autoCancel;
    }

    struct OrderProps {
        OrderAddresses addresses;
        OrderNumbers numbers;
        OrderFlags flags;
        bytes32[] _dataList;
    }

    struct PositionAddresses {
        address account;
        address market;
        address collateralToken;
    }

    struct PositionNumbers {
        uint256 sizeInUsd;
        uint256 sizeInTokens;
        uint256 collateralAmount;
        int256 pendingImpactAmount;
        uint256 borrowingFactor;
        uint256 fundingFeeAmountPerSize;
        uint256 longTokenClaimableFundingAmountPerSize;
        uint256 shortTokenClaimableFundingAmountPerSize;
        uint256 increasedAtTime;
        uint256 decreasedAtTime;
    }

    struct PositionFlags {
        bool isLong;
    }

    struct PositionProps {
        PositionAddresses addresses;
        PositionNumbers numbers;
        PositionFlags flags;
    }

    // Order.OrderType, GMX's enum values
    uint8 internal constant MARKET_SWAP = 0;
    uint8 internal constant LIMIT_SWAP = 1;
    uint8 internal constant MARKET_INCREASE = 2;
    uint8 internal constant LIMIT_INCREASE = 3;
    uint8 internal constant MARKET_DECREASE = 4;
    uint8 internal constant LIMIT_DECREASE = 5;
    uint8 internal constant STOP_LOSS_DECREASE = 6;
    uint8 internal constant LIQUIDATION = 7;
    uint8 internal constant STOP_INCREASE = 8;
}

/// GMX's EventUtils.EventLogData and a small builder for it.
library GmxEvents {
    struct AddressKeyValue { string key; address value; }
    struct AddressArrayKeyValue { string key; address[] value; }
    struct UintKeyValue { string key; uint256 value; }
    struct UintArrayKeyValue { string key; uint256[] value; }
    struct IntKeyValue { string key; int256 value; }
    struct IntArrayKeyValue { string key; int256[] value; }
    struct BoolKeyValue { string key; bool value; }
    struct BoolArrayKeyValue { string key; bool[] value; }
    struct Bytes32KeyValue { string key; bytes32 value; }
    struct Bytes32ArrayKeyValue { string key; bytes32[] value; }
    struct BytesKeyValue { string key; bytes value; }
    struct BytesArrayKeyValue { string key; bytes[] value; }
    struct StringKeyValue { string key; string value; }
    struct StringArrayKeyValue { string key; string[] value; }

    struct AddressItems { AddressKeyValue[] items; AddressArrayKeyValue[] arrayItems; }
    struct UintItems { UintKeyValue[] items; UintArrayKeyValue[] arrayItems; }
    struct IntItems { IntKeyValue[] items; IntArrayKeyValue[] arrayItems; }
    struct BoolItems { BoolKeyValue[] items; BoolArrayKeyValue[] arrayItems; }
    struct Bytes32Items { Bytes32KeyValue[] items; Bytes32ArrayKeyValue[] arrayItems; }
    struct BytesItems { BytesKeyValue[] items; BytesArrayKeyValue[] arrayItems; }
    struct StringItems { StringKeyValue[] items; StringArrayKeyValue[] arrayItems; }

    struct EventLogData {
        AddressItems addressItems;
        UintItems uintItems;
        IntItems intItems;
        BoolItems boolItems;
        Bytes32Items bytes32Items;
        BytesItems bytesItems;
        StringItems stringItems;
    }

    /// An empty event with room for that many single items of each kind (address, uint, int, bool, bytes32).
    function init(uint256 a, uint256 u, uint256 i, uint256 b, uint256 h) internal pure returns (EventLogData memory d) {
        d.addressItems.items = new AddressKeyValue[](a);
        d.uintItems.items = new UintKeyValue[](u);
        d.intItems.items = new IntKeyValue[](i);
        d.boolItems.items = new BoolKeyValue[](b);
        d.bytes32Items.items = new Bytes32KeyValue[](h);
    }

    function addr(EventLogData memory d, uint256 at, string memory key, address value) internal pure {
        d.addressItems.items[at] = AddressKeyValue(key, value);
    }

    function uintItem(EventLogData memory d, uint256 at, string memory key, uint256 value) internal pure {
        d.uintItems.items[at] = UintKeyValue(key, value);
    }

    function intItem(EventLogData memory d, uint256 at, string memory key, int256 value) internal pure {
        d.intItems.items[at] = IntKeyValue(key, value);
    }

    function boolItem(EventLogData memory d, uint256 at, string memory key, bool value) internal pure {
        d.boolItems.items[at] = BoolKeyValue(key, value);
    }

    function b32(EventLogData memory d, uint256 at, string memory key, bytes32 value) internal pure {
        d.bytes32Items.items[at] = Bytes32KeyValue(key, value);
    }
}

interface IGmxEventEmitter {
    function emitEventLog1(string memory eventName, bytes32 topic1, GmxEvents.EventLogData memory eventData) external;
    function emitEventLog2(string memory eventName, bytes32 topic1, bytes32 topic2, GmxEvents.EventLogData memory eventData) external;
}

/// GMX's custom errors the devnet raises (Errors.sol's names and parameters).
library GmxErrors {
    error Unauthorized(address msgSender, string role);
    error EmptyMarket();
    error DisabledMarket(address market);
    error EmptyReceiver();
    error EmptyOrder();
    error OrderNotFound(bytes32 key);
    error EmptyPosition();
    error UnsupportedOrderType(uint256 orderType);
    error MaxSwapPathLengthExceeded(uint256 swapPathLengh, uint256 maxSwapPathLength);
    error InvalidCollateralTokenForMarket(address market, address token);
    error InsufficientExecutionFee(uint256 minExecutionFee, uint256 executionFee);
    error InsufficientWntAmountForExecutionFee(uint256 wntAmount, uint256 executionFee);
    error EndOfOracleSimulation();
    error OrderNotFulfillableAtAcceptablePrice(uint256 price, uint256 acceptablePrice);
    error InsufficientCollateralUsd(int256 remainingCollateralUsd);
    error InsufficientCollateralAmount(uint256 collateralAmount, int256 collateralDeltaAmount);
    error InsufficientReserve(uint256 reservedUsd, uint256 maxReservedUsd);
    error MaxOpenInterestExceeded(uint256 openInterest, uint256 maxOpenInterest);
    error MinPositionSize(uint256 positionSizeInUsd, uint256 minPositionSizeUsd);
    error InvalidDecreaseOrderSize(uint256 sizeDeltaUsd, uint256 positionSizeInUsd);
    error EmptySizeDeltaInTokens();
    error EmptyPrimaryPrice(address token);
    error InvalidOracleProviderForToken(address provider, address expectedProvider);
    error OracleTimestampsAreSmallerThanRequired(uint256 minOracleTimestamp, uint256 expectedTimestamp);
    error InsufficientPoolAmount(uint256 poolAmount, uint256 amount);
    error PriceImpactLargerThanOrderSize(int256 priceImpactUsd, uint256 sizeDeltaUsd);
    error RequestNotYetCancellable(uint256 requestAge, uint256 requestExpirationAge, string requestType);
    error InvalidOrderPrices(uint256 primaryPriceMin, uint256 primaryPriceMax, uint256 triggerPrice, uint256 orderType);
    error OrderNotUpdatable(uint256 orderType);
    error InvalidKeeperForFrozenOrder(address keeper);
    error InvalidClaimFundingFeesInput(uint256 marketsLength, uint256 tokensLength);

    /// The name of a revert the devnet knows (OrderCancelled's `reason`), else "" as GMX gives for others.
    function nameOf(bytes memory reasonBytes) internal pure returns (string memory) {
        if (reasonBytes.length < 4) return "";
        bytes4 s = bytes4(reasonBytes);
        if (s == OrderNotFulfillableAtAcceptablePrice.selector) return "OrderNotFulfillableAtAcceptablePrice";
        if (s == InsufficientCollateralUsd.selector) return "InsufficientCollateralUsd";
        if (s == InsufficientCollateralAmount.selector) return "InsufficientCollateralAmount";
        if (s == InsufficientReserve.selector) return "InsufficientReserve";
        if (s == MaxOpenInterestExceeded.selector) return "MaxOpenInterestExceeded";
        if (s == MinPositionSize.selector) return "MinPositionSize";
        if (s == InvalidDecreaseOrderSize.selector) return "InvalidDecreaseOrderSize";
        if (s == EmptyPosition.selector) return "EmptyPosition";
        if (s == EmptySizeDeltaInTokens.selector) return "EmptySizeDeltaInTokens";
        if (s == InsufficientPoolAmount.selector) return "InsufficientPoolAmount";
        if (s == PriceImpactLargerThanOrderSize.selector) return "PriceImpactLargerThanOrderSize";
        if (s == bytes4(keccak256("Error(string)")) && reasonBytes.length >= 68) {
            bytes memory body = new bytes(reasonBytes.length - 4);
            for (uint256 i = 0; i < body.length; i++) body[i] = reasonBytes[i + 4];
            return abi.decode(body, (string));
        }
        return "";
    }
}

/// GMX's Keys.sol names and composite keys (the subset the devnet uses).
library GmxKeys {
    /// keccak256(abi.encode("CONTROLLER"))
    bytes32 internal constant CONTROLLER = 0x97adf037b2472f4a6a9825eff7d2dd45e37f2dc308df2a260d6a72af4189a65b;
    /// keccak256(abi.encode("ORDER_KEEPER"))
    bytes32 internal constant ORDER_KEEPER = 0x40a07f8f0fc57fcf18b093d96362a8e661eaac7b7e6edbf66f242111f83a6794;
    /// keccak256(abi.encode("ROUTER_PLUGIN"))
    bytes32 internal constant ROUTER_PLUGIN = 0xc82e6cc76072f8edb32d42796e58e13ab6e145524eb6b36c073be82f20d410f3;
    /// keccak256(abi.encode("ROLE_ADMIN"))
    bytes32 internal constant ROLE_ADMIN = 0x56908b85b56869d7c69cd020749874f238259af9646ca930287866cdd660b7d9;

    /// keccak256(abi.encode("WNT"))
    bytes32 internal constant WNT = 0xfe9362e2c30d3539df13ca6093740ddefd950bcc6aefb509209cacb12ba04f06;
    /// keccak256(abi.encode("NONCE"))
    bytes32 internal constant NONCE = 0x61d7b15962e47499cf052e59076ed26d83442f0a746870faeec94287c0f3d55f;
    /// keccak256(abi.encode("MARKET_LIST"))
    bytes32 internal constant MARKET_LIST = 0xcdac201abd09598973b1365dbbaeb65ff0f370d30bb5c7440dc3341f570b2e38;
    /// keccak256(abi.encode("ORDER_LIST"))
    bytes32 internal constant ORDER_LIST = 0x86f7cfd5d8f8404e5145c91bebb8484657420159dabd0753d6a59f3de3f7b8c1;
    /// keccak256(abi.encode("ACCOUNT_ORDER_LIST"))
    bytes32 internal constant ACCOUNT_ORDER_LIST = 0xd008ab8798caa94b11c12ebc5bce5104c343552f5375d1bf3870b4b4a6e8d562;
    /// keccak256(abi.encode("POSITION_LIST"))
    bytes32 internal constant POSITION_LIST = 0x3fe95e2be5587b71e685e297dc351a27f09a363e7d84b38bb75158a8f06590ac;
    /// keccak256(abi.encode("ACCOUNT_POSITION_LIST"))
    bytes32 internal constant ACCOUNT_POSITION_LIST = 0xa94015725b1182c6666b50aed1bb84d2b2cf9da39e6f5a5b19cd01f2f37738a1;
    /// keccak256(abi.encode("REQUEST_EXPIRATION_TIME"))
    bytes32 internal constant REQUEST_EXPIRATION_TIME = 0xf664ba0f4e5389df44705cd100171228b74c4f050a9f00bd873e95d25c49a273;
    /// keccak256(abi.encode("ORACLE_PROVIDER_FOR_TOKEN"))
    bytes32 internal constant ORACLE_PROVIDER_FOR_TOKEN = 0x657bbff942bd72a4c9f2ae3dde95e145191db37af62643255f43fd27fb007981;

    /// keccak256(abi.encode("ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1"))
    bytes32 internal constant ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1 = 0x39288f227e5db9a793e9f4afb15aa22b77dbb7e410ffc973c816a19a6ed921cd;
    /// keccak256(abi.encode("ESTIMATED_GAS_FEE_PER_ORACLE_PRICE"))
    bytes32 internal constant ESTIMATED_GAS_FEE_PER_ORACLE_PRICE = 0xf95915378e4358fb5f51ae0fd75853a15a29a978eb14b73d5c5b7d69d3b9fccc;
    /// keccak256(abi.encode("ESTIMATED_GAS_FEE_MULTIPLIER_FACTOR"))
    bytes32 internal constant ESTIMATED_GAS_FEE_MULTIPLIER_FACTOR = 0xce135f2a886cf6d862269f215b1e64498fa09cb04f90b771b163399df2a82b81;
    /// keccak256(abi.encode("EXECUTION_GAS_FEE_BASE_AMOUNT_V2_1"))
    bytes32 internal constant EXECUTION_GAS_FEE_BASE_AMOUNT_V2_1 = 0x3f6fa256a0f23dcedf39a71b69828f9f2798c96ed183ecac67a1f77a2a8053f4;
    /// keccak256(abi.encode("EXECUTION_GAS_FEE_MULTIPLIER_FACTOR"))
    bytes32 internal constant EXECUTION_GAS_FEE_MULTIPLIER_FACTOR = 0x65b1cbab23a5e24597a3d4e2966e0205be2ea573a0eab06be214d7e63488148f;
    /// keccak256(abi.encode("INCREASE_ORDER_GAS_LIMIT"))
    bytes32 internal constant INCREASE_ORDER_GAS_LIMIT = 0x983e0a7f5307213e84497f2543331fe5e404db14ddf98f98dc956e0ee3ab6875;
    /// keccak256(abi.encode("DECREASE_ORDER_GAS_LIMIT"))
    bytes32 internal constant DECREASE_ORDER_GAS_LIMIT = 0xfce7a3444b72c2d30987163c1f2e6c00cffa03bf0b6ca2f077e8db006b4cae8b;
    /// keccak256(abi.encode("SWAP_ORDER_GAS_LIMIT"))
    bytes32 internal constant SWAP_ORDER_GAS_LIMIT = 0x1df34600e0072da6588ec3a179142a668c6e62238ad3354a7d2a3ae665b50f5c;
    /// keccak256(abi.encode("SINGLE_SWAP_GAS_LIMIT"))
    bytes32 internal constant SINGLE_SWAP_GAS_LIMIT = 0x3be28fb346f7abc4a956a16d3739c8c4bfcca9385988c64bf86cdd16638c1f81;

    /// keccak256(abi.encode("IS_MARKET_DISABLED"))
    bytes32 internal constant IS_MARKET_DISABLED = 0x5c27e8a9fa01145fb01eb80b81db2eab7e57bc33d109d6a64315239a65ce4d36;
    /// keccak256(abi.encode("POSITION_FEE_FACTOR"))
    bytes32 internal constant POSITION_FEE_FACTOR = 0x3999256650a6ebfea3dfbd4d56990f4d9048943a0e38ea6aabfc65122556c342;
    /// keccak256(abi.encode("POSITION_IMPACT_FACTOR"))
    bytes32 internal constant POSITION_IMPACT_FACTOR = 0xdbe66c23ce3688bc34131316a8b4dd967631de35afb1dbb972bc1b7c71c4a18b;
    /// keccak256(abi.encode("POSITION_IMPACT_EXPONENT_FACTOR"))
    bytes32 internal constant POSITION_IMPACT_EXPONENT_FACTOR = 0xdd130ae153fcacdeb3063e386277de2d305638932d8de421f5c79f3919eea233;
    /// keccak256(abi.encode("MAX_POSITION_IMPACT_FACTOR"))
    bytes32 internal constant MAX_POSITION_IMPACT_FACTOR = 0x13be955c1220ee542749f9621d477d34649523d4273ecf1b722d67b372cca75f;
    /// keccak256(abi.encode("POSITION_IMPACT_POOL_AMOUNT"))
    bytes32 internal constant POSITION_IMPACT_POOL_AMOUNT = 0x8d05e344d016decb2483e1a2db6dfebdef3f67c47ac787f0ac505b4d45d3e16c;
    /// keccak256(abi.encode("MIN_COLLATERAL_FACTOR"))
    bytes32 internal constant MIN_COLLATERAL_FACTOR = 0x9fc265ee9783e670a7a731141f58b59bca5a260ba3eb3f893412fb613dc559f7;
    /// keccak256(abi.encode("MIN_COLLATERAL_FACTOR_FOR_OPEN_INTEREST_MULTIPLIER"))
    bytes32 internal constant MIN_COLLATERAL_FACTOR_FOR_OPEN_INTEREST_MULTIPLIER = 0xdc48ea96f9c72892c8db4fdc046f04409cdef6b91e71b660bce5b8302ce8a9bb;
    /// keccak256(abi.encode("MIN_COLLATERAL_USD"))
    bytes32 internal constant MIN_COLLATERAL_USD = 0x6497f0f2c47edc68f06ede1c06d3475f939eb1a8341362460277bcd8ee7419f4;
    /// keccak256(abi.encode("MIN_POSITION_SIZE_USD"))
    bytes32 internal constant MIN_POSITION_SIZE_USD = 0x48faddd525cc6e216bc2c62a7053b940a842e3c102782fb4da69ebeb8f7bd724;
    /// keccak256(abi.encode("RESERVE_FACTOR"))
    bytes32 internal constant RESERVE_FACTOR = 0xeb6dbcc031d84cf5bcdec21aafd7b4ea59618b0863960405767329a7ad41889a;
    /// keccak256(abi.encode("OPEN_INTEREST_RESERVE_FACTOR"))
    bytes32 internal constant OPEN_INTEREST_RESERVE_FACTOR = 0xfb0e1c66a0f6d31a6b27a57ad9f57c3a0afb198688ed6d5930c60914530f220a;
    /// keccak256(abi.encode("MAX_OPEN_INTEREST"))
    bytes32 internal constant MAX_OPEN_INTEREST = 0x00468cb3aa9036ff00a31f90887485d87e1ee0299e9c1e1a838fe5110c4fbafb;
    /// keccak256(abi.encode("MAX_POOL_AMOUNT"))
    bytes32 internal constant MAX_POOL_AMOUNT = 0xe88b5773e3873a6265fa6e9e8dc016218fbded41751726542157f40b640a2083;
    /// keccak256(abi.encode("POOL_AMOUNT"))
    bytes32 internal constant POOL_AMOUNT = 0x8d6d2afbc2bb1e17cb89b72f19b266a410f6ee8f890812b98b609d4bbf135960;
    /// keccak256(abi.encode("OPEN_INTEREST"))
    bytes32 internal constant OPEN_INTEREST = 0x4259c04608de5df0fa0e375507d66e8ffc81773c9f3dd501a181cbb349ae4fe0;
    /// keccak256(abi.encode("OPEN_INTEREST_IN_TOKENS"))
    bytes32 internal constant OPEN_INTEREST_IN_TOKENS = 0xc577a5cb08b8e2126f9b9796b8c85ef9d1b5047a5ff670fc18802878f0bfd2f8;
    /// keccak256(abi.encode("BORROWING_FACTOR"))
    bytes32 internal constant BORROWING_FACTOR = 0xa38d85dceca084ba5b76ea9a3020c5536fb5cf7455ef13366c4f4ad20d24b3c2;
    /// keccak256(abi.encode("BORROWING_EXPONENT_FACTOR"))
    bytes32 internal constant BORROWING_EXPONENT_FACTOR = 0x44e07d838924516f5b9c562ffc22db10a563a3f687178102325f6c448f2fa35d;
    /// keccak256(abi.encode("CUMULATIVE_BORROWING_FACTOR"))
    bytes32 internal constant CUMULATIVE_BORROWING_FACTOR = 0xdfcf1ff0bd7c33ac55f48912a5ab14e3f2f75247a2a36b0f34c4bf025cf7aca9;
    /// keccak256(abi.encode("CUMULATIVE_BORROWING_FACTOR_UPDATED_AT"))
    bytes32 internal constant CUMULATIVE_BORROWING_FACTOR_UPDATED_AT = 0x965350856896dd6e2b221d575c162996752999158c92401a2428740d55b419bf;
    /// keccak256(abi.encode("FUNDING_FACTOR"))
    bytes32 internal constant FUNDING_FACTOR = 0x8d25c5b55501c0bb1657a27730a272059c9a87bbf03ea76434f679bfef179e73;
    /// keccak256(abi.encode("FUNDING_EXPONENT_FACTOR"))
    bytes32 internal constant FUNDING_EXPONENT_FACTOR = 0x769527e09152c8f6c2369c579559e9b754b40a814f8d7aca18ab79ffef6c3a02;
    /// keccak256(abi.encode("FUNDING_UPDATED_AT"))
    bytes32 internal constant FUNDING_UPDATED_AT = 0xb5ddf508060c27de8692c76ee937ac1c56cb8c1fb7431f074d2a0eb00b863ee6;
    /// keccak256(abi.encode("FUNDING_FEE_AMOUNT_PER_SIZE"))
    bytes32 internal constant FUNDING_FEE_AMOUNT_PER_SIZE = 0x4c12833ffbe25653fd28535e4277f4c8ada589407177c25b4e4760ab736a64ba;
    /// keccak256(abi.encode("CLAIMABLE_FUNDING_AMOUNT_PER_SIZE"))
    bytes32 internal constant CLAIMABLE_FUNDING_AMOUNT_PER_SIZE = 0xeb7c85784645884cb4a464c83381b211da0a5822b2a986804aa3cba063c130cd;
    /// keccak256(abi.encode("CLAIMABLE_FUNDING_AMOUNT"))
    bytes32 internal constant CLAIMABLE_FUNDING_AMOUNT = 0x06fc3f5466c175728538f97bb3af89978c1db23c9c7f107930c4bb1b84305a1d;

    function accountOrderList(address account) internal pure returns (bytes32) {
        return keccak256(abi.encode(ACCOUNT_ORDER_LIST, account));
    }

    function accountPositionList(address account) internal pure returns (bytes32) {
        return keccak256(abi.encode(ACCOUNT_POSITION_LIST, account));
    }

    function oracleProviderForToken(address token) internal pure returns (bytes32) {
        return keccak256(abi.encode(ORACLE_PROVIDER_FOR_TOKEN, token));
    }

    function isMarketDisabled(address market) internal pure returns (bytes32) {
        return keccak256(abi.encode(IS_MARKET_DISABLED, market));
    }

    function marketBool(bytes32 base, address market, bool flag) internal pure returns (bytes32) {
        return keccak256(abi.encode(base, market, flag));
    }

    function marketOnly(bytes32 base, address market) internal pure returns (bytes32) {
        return keccak256(abi.encode(base, market));
    }

    function marketToken(bytes32 base, address market, address token) internal pure returns (bytes32) {
        return keccak256(abi.encode(base, market, token));
    }

    /// OPEN_INTEREST, OPEN_INTEREST_IN_TOKENS, FUNDING_FEE_AMOUNT_PER_SIZE, CLAIMABLE_FUNDING_AMOUNT_PER_SIZE.
    function marketTokenBool(bytes32 base, address market, address token, bool isLong) internal pure returns (bytes32) {
        return keccak256(abi.encode(base, market, token, isLong));
    }

    function claimableFundingAmount(address market, address token, address account) internal pure returns (bytes32) {
        return keccak256(abi.encode(CLAIMABLE_FUNDING_AMOUNT, market, token, account));
    }

    function positionKey(address account, address market, address collateralToken, bool isLong) internal pure returns (bytes32) {
        return keccak256(abi.encode(account, market, collateralToken, isLong));
    }

    function field(bytes32 key, bytes32 name) internal pure returns (bytes32) {
        return keccak256(abi.encode(key, name));
    }

    function marketField(address market, bytes32 name) internal pure returns (bytes32) {
        return keccak256(abi.encode(market, name));
    }
}

/// The store utils' field names: keccak256(abi.encode("NAME")) (precomputed: smaller code, less gas).
library GmxFields {
    bytes32 internal constant ACCEPTABLE_PRICE = 0x1852a32ed7a6e76ecd2573bbdce5314d1cc5abbb7c36c280726828ee547c9864;
    bytes32 internal constant ACCOUNT = 0xe0d9c892a68419aa57cc55f7955004fbe8b8a8d8b9fd17fdd1a2cb2d099c5039;
    bytes32 internal constant AUTO_CANCEL = 0xc12f67a5eabc7160159fc89767df17ed45d99fb7fe42eafe84c1a383b01673c4;
    bytes32 internal constant BORROWING_FACTOR = 0xa38d85dceca084ba5b76ea9a3020c5536fb5cf7455ef13366c4f4ad20d24b3c2;
    bytes32 internal constant CALLBACK_CONTRACT = 0xfebf3f5e229a81e4c91075b5d98d127723722014606fd94fa401b5216fa3679b;
    bytes32 internal constant CALLBACK_GAS_LIMIT = 0xca1e8d8b43a625141bbd6f7f49bdc88bcf48b1363943108290537b1f8b9fed2d;
    bytes32 internal constant CANCELLATION_RECEIVER = 0x4aa9692a5e349d387728edba8fe6ef0534547291ee783b121c3fd27fd968599b;
    bytes32 internal constant COLLATERAL_AMOUNT = 0xb88da5cd71628783263477a6261c2906e380aa32e85e2e87b2463bbdc1127221;
    bytes32 internal constant COLLATERAL_TOKEN = 0xd890cedaab800f07f6432ac38d67dd1adbee92bfb56f145ca33f99455f6398b4;
    bytes32 internal constant DECREASED_AT_TIME = 0x48796fff22c69fa53d0d6598d29497cb2964b3cc8afa502ea523c79ea2fa854e;
    bytes32 internal constant DECREASE_POSITION_SWAP_TYPE = 0x5801ac706d5f39dfaf82f9abef9f5c04cc6b916f0dd73ac06283a2b9f69293c7;
    bytes32 internal constant EXECUTION_FEE = 0xcd085e6f17ae9e8867a3cb6baef79db85cc82b2f0756ad9ab5b6d0a92486ac38;
    bytes32 internal constant FUNDING_FEE_AMOUNT_PER_SIZE = 0x4c12833ffbe25653fd28535e4277f4c8ada589407177c25b4e4760ab736a64ba;
    bytes32 internal constant INCREASED_AT_TIME = 0x31b71cea6b559718efcafa41bb78cc2e0f1ba44582955aa9acda14488b3df6eb;
    bytes32 internal constant INDEX_TOKEN = 0x24d94f32ee792b2aa0f9a7903eacb19e72fa7d5a6ae424211a3ecb6df2f3d6f3;
    bytes32 internal constant INITIAL_COLLATERAL_DELTA_AMOUNT = 0x3b8fd2ce1cd576ec5228601492a1493597f29da022fa44e4c0ff7ab4f7362bd1;
    bytes32 internal constant INITIAL_COLLATERAL_TOKEN = 0xcdc650ce20565c8a9b2b2c37b50e1700cd06a18a8efebd531f600992efc58f28;
    bytes32 internal constant IS_FROZEN = 0x4cd97e422e1308e054f234daa0793884244edad533d50d223d3a8fe7d228efcf;
    bytes32 internal constant IS_LONG = 0x904aa2b28519bea177703c51654ed8342c4149718d9772a974d8de9c227d6c74;
    bytes32 internal constant LONG_TOKEN = 0x1cee5c743c645ce0e12ea1dfb444ac5a6a0498a2ab941817ba37b894ba584ab0;
    bytes32 internal constant LONG_TOKEN_CLAIMABLE_FUNDING_AMOUNT_PER_SIZE = 0x377f5421a43281f59eb60874ed6733a49fbb83bdd4311ad4a40072438075c5da;
    bytes32 internal constant MARKET = 0x36a516acbf94d52a16febb2c2bae945ef0d2062b87c2f6653a501e7b6fe1cd63;
    bytes32 internal constant MARKET_TOKEN = 0x765937b1e41581ed77e0c9da4139500ed9bc67975ed3bb1d096489984323feab;
    bytes32 internal constant MIN_OUTPUT_AMOUNT = 0x231aacef5f430506649e20837ef01a1665be13270f543ebb855778117daadfd0;
    bytes32 internal constant ORDER_TYPE = 0xb904c54f76013304127570bb28debd61530bc5156ee9764d3961ccc516c35da7;
    bytes32 internal constant PENDING_IMPACT_AMOUNT = 0xe1657c291c5725ec971920e390e23487e9d5e995fb723634be8a3fb4ef04795d;
    bytes32 internal constant RECEIVER = 0x509310050d72a2ea75efe5b365afea52293b3d91eb6e73b9f4e9be2ae25d0567;
    bytes32 internal constant SHORT_TOKEN = 0x3d04da2227bcca4846843420141ee1e5b2bd3e0143c63b13343396728e0014b0;
    bytes32 internal constant SHORT_TOKEN_CLAIMABLE_FUNDING_AMOUNT_PER_SIZE = 0x50fb65a4fe46723757e3a2d8de70b308f9b1bf7e96f96dd1117b7abe91d2f1fa;
    bytes32 internal constant SHOULD_UNWRAP_NATIVE_TOKEN = 0x55a487d51162eddd9e73729b7d674b2e86e123570637d802680f2ddcdb8f429c;
    bytes32 internal constant SIZE_DELTA_USD = 0xfc413b0c08720e261b3dde3530c4b7e1af9d6c3c6887a6d9470607b10e39714b;
    bytes32 internal constant SIZE_IN_TOKENS = 0x1c91a039ea7adae4d4a2ca0b96411d6ed91780a1e843d558b517bd164cb8131e;
    bytes32 internal constant SIZE_IN_USD = 0xb7546ea7387a34ebc18a4a83bee7e811397161e773fb7bc4e9bfb9fc65e9aa89;
    bytes32 internal constant SRC_CHAIN_ID = 0x1ddd039402503f7e625cbe80d8867d65579114f73ed7e4e3b774b7254a15cc8c;
    bytes32 internal constant TRIGGER_PRICE = 0x5401942dc325c74a7839d8d6ed9eafc2434f7016a28796f753d36ce1a32cc96b;
    bytes32 internal constant UI_FEE_RECEIVER = 0xb5d7d86f413cc9335e1cfcd708c14a07b117210d79dd2d468a97c3b19b70495f;
    bytes32 internal constant UPDATED_AT_TIME = 0xc6f2dbab301e03e145428388fa573555a81fa3b78e3dbb9d448288ae5710fe0d;
    bytes32 internal constant VALID_FROM_TIME = 0xfb0055bdc474d948198c00f6a98daafae3335b1323a8ca7b4ae6f3f848e46dd1;
}

/// Orders, positions and markets in the DataStore under GMX's store-utils key scheme.
library GmxStore {
    string internal constant NOT_ON_DEVNET = "not on the devnet";

    function getMarket(IGmxDataStore ds, address market) internal view returns (GmxTypes.MarketProps memory m) {
        m.marketToken = ds.getAddress(GmxKeys.marketField(market, GmxFields.MARKET_TOKEN));
        m.indexToken = ds.getAddress(GmxKeys.marketField(market, GmxFields.INDEX_TOKEN));
        m.longToken = ds.getAddress(GmxKeys.marketField(market, GmxFields.LONG_TOKEN));
        m.shortToken = ds.getAddress(GmxKeys.marketField(market, GmxFields.SHORT_TOKEN));
    }

    /// The market, or EmptyMarket/DisabledMarket as GMX's MarketUtils.getEnabledMarket.
    function getEnabledMarket(IGmxDataStore ds, address market) internal view returns (GmxTypes.MarketProps memory m) {
        m = getMarket(ds, market);
        if (m.marketToken == address(0)) revert GmxErrors.EmptyMarket();
        if (ds.getBool(GmxKeys.isMarketDisabled(market))) revert GmxErrors.DisabledMarket(market);
    }

    function orderExists(IGmxDataStore ds, bytes32 key) internal view returns (bool) {
        return ds.containsBytes32(GmxKeys.ORDER_LIST, key);
    }

    function getOrder(IGmxDataStore ds, bytes32 key) internal view returns (GmxTypes.OrderProps memory o) {
        o.addresses.account = ds.getAddress(GmxKeys.field(key, GmxFields.ACCOUNT));
        o.addresses.receiver = ds.getAddress(GmxKeys.field(key, GmxFields.RECEIVER));
        o.addresses.cancellationReceiver = ds.getAddress(GmxKeys.field(key, GmxFields.CANCELLATION_RECEIVER));
        o.addresses.callbackContract = ds.getAddress(GmxKeys.field(key, GmxFields.CALLBACK_CONTRACT));
        o.addresses.uiFeeReceiver = ds.getAddress(GmxKeys.field(key, GmxFields.UI_FEE_RECEIVER));
        o.addresses.market = ds.getAddress(GmxKeys.field(key, GmxFields.MARKET));
        o.addresses.initialCollateralToken = ds.getAddress(GmxKeys.field(key, GmxFields.INITIAL_COLLATERAL_TOKEN));
        o.addresses.swapPath = new address[](0);
        o.numbers.orderType = uint8(ds.getUint(GmxKeys.field(key, GmxFields.ORDER_TYPE)));
        o.numbers.decreasePositionSwapType = uint8(ds.getUint(GmxKeys.field(key, GmxFields.DECREASE_POSITION_SWAP_TYPE)));
        o.numbers.sizeDeltaUsd = ds.getUint(GmxKeys.field(key, GmxFields.SIZE_DELTA_USD));
        o.numbers.initialCollateralDeltaAmount = ds.getUint(GmxKeys.field(key, GmxFields.INITIAL_COLLATERAL_DELTA_AMOUNT));
        o.numbers.triggerPrice = ds.getUint(GmxKeys.field(key, GmxFields.TRIGGER_PRICE));
        o.numbers.acceptablePrice = ds.getUint(GmxKeys.field(key, GmxFields.ACCEPTABLE_PRICE));
        o.numbers.executionFee = ds.getUint(GmxKeys.field(key, GmxFields.EXECUTION_FEE));
        o.numbers.callbackGasLimit = ds.getUint(GmxKeys.field(key, GmxFields.CALLBACK_GAS_LIMIT));
        o.numbers.minOutputAmount = ds.getUint(GmxKeys.field(key, GmxFields.MIN_OUTPUT_AMOUNT));
        o.numbers.updatedAtTime = ds.getUint(GmxKeys.field(key, GmxFields.UPDATED_AT_TIME));
        o.numbers.validFromTime = ds.getUint(GmxKeys.field(key, GmxFields.VALID_FROM_TIME));
        o.numbers.srcChainId = ds.getUint(GmxKeys.field(key, GmxFields.SRC_CHAIN_ID));
        o.flags.isLong = ds.getBool(GmxKeys.field(key, GmxFields.IS_LONG));
        o.flags.shouldUnwrapNativeToken = ds.getBool(GmxKeys.field(key, GmxFields.SHOULD_UNWRAP_NATIVE_TOKEN));
        o.flags.isFrozen = ds.getBool(GmxKeys.field(key, GmxFields.IS_FROZEN));
        o.flags.autoCancel = ds.getBool(GmxKeys.field(key, GmxFields.AUTO_CANCEL));
        o._dataList = new bytes32[](0);
    }

    /// Writes the order (o's fields; `o.addresses.account` zero clears them) and its list entries.
    function setOrder(IGmxDataStore ds, bytes32 key, GmxTypes.OrderProps memory o) internal {
        ds.setAddress(GmxKeys.field(key, GmxFields.ACCOUNT), o.addresses.account);
        ds.setAddress(GmxKeys.field(key, GmxFields.RECEIVER), o.addresses.receiver);
        ds.setAddress(GmxKeys.field(key, GmxFields.CANCELLATION_RECEIVER), o.addresses.cancellationReceiver);
        ds.setAddress(GmxKeys.field(key, GmxFields.CALLBACK_CONTRACT), o.addresses.callbackContract);
        ds.setAddress(GmxKeys.field(key, GmxFields.UI_FEE_RECEIVER), o.addresses.uiFeeReceiver);
        ds.setAddress(GmxKeys.field(key, GmxFields.MARKET), o.addresses.market);
        ds.setAddress(GmxKeys.field(key, GmxFields.INITIAL_COLLATERAL_TOKEN), o.addresses.initialCollateralToken);
        ds.setUint(GmxKeys.field(key, GmxFields.ORDER_TYPE), o.numbers.orderType);
        ds.setUint(GmxKeys.field(key, GmxFields.DECREASE_POSITION_SWAP_TYPE), o.numbers.decreasePositionSwapType);
        ds.setUint(GmxKeys.field(key, GmxFields.SIZE_DELTA_USD), o.numbers.sizeDeltaUsd);
        ds.setUint(GmxKeys.field(key, GmxFields.INITIAL_COLLATERAL_DELTA_AMOUNT), o.numbers.initialCollateralDeltaAmount);
        ds.setUint(GmxKeys.field(key, GmxFields.TRIGGER_PRICE), o.numbers.triggerPrice);
        ds.setUint(GmxKeys.field(key, GmxFields.ACCEPTABLE_PRICE), o.numbers.acceptablePrice);
        ds.setUint(GmxKeys.field(key, GmxFields.EXECUTION_FEE), o.numbers.executionFee);
        ds.setUint(GmxKeys.field(key, GmxFields.CALLBACK_GAS_LIMIT), o.numbers.callbackGasLimit);
        ds.setUint(GmxKeys.field(key, GmxFields.MIN_OUTPUT_AMOUNT), o.numbers.minOutputAmount);
        ds.setUint(GmxKeys.field(key, GmxFields.UPDATED_AT_TIME), o.numbers.updatedAtTime);
        ds.setUint(GmxKeys.field(key, GmxFields.VALID_FROM_TIME), o.numbers.validFromTime);
        ds.setUint(GmxKeys.field(key, GmxFields.SRC_CHAIN_ID), o.numbers.srcChainId);
        ds.setBool(GmxKeys.field(key, GmxFields.IS_LONG), o.flags.isLong);
        ds.setBool(GmxKeys.field(key, GmxFields.SHOULD_UNWRAP_NATIVE_TOKEN), o.flags.shouldUnwrapNativeToken);
        ds.setBool(GmxKeys.field(key, GmxFields.IS_FROZEN), o.flags.isFrozen);
        ds.setBool(GmxKeys.field(key, GmxFields.AUTO_CANCEL), o.flags.autoCancel);
    }

    function addOrder(IGmxDataStore ds, bytes32 key, GmxTypes.OrderProps memory o) internal {
        setOrder(ds, key, o);
        ds.addBytes32(GmxKeys.ORDER_LIST, key);
        ds.addBytes32(GmxKeys.accountOrderList(o.addresses.account), key);
    }

    function removeOrder(IGmxDataStore ds, bytes32 key, address account) internal {
        // Every field zeroed in loops (smaller code than a setOrder of an empty order).
        bytes32[7] memory addresses = [
            GmxFields.ACCOUNT, GmxFields.RECEIVER, GmxFields.CANCELLATION_RECEIVER, GmxFields.CALLBACK_CONTRACT,
            GmxFields.UI_FEE_RECEIVER, GmxFields.MARKET, GmxFields.INITIAL_COLLATERAL_TOKEN
        ];
        for (uint256 i = 0; i < addresses.length; i++) ds.setAddress(GmxKeys.field(key, addresses[i]), address(0));
        bytes32[12] memory uints = [
            GmxFields.ORDER_TYPE, GmxFields.DECREASE_POSITION_SWAP_TYPE, GmxFields.SIZE_DELTA_USD, GmxFields.INITIAL_COLLATERAL_DELTA_AMOUNT,
            GmxFields.TRIGGER_PRICE, GmxFields.ACCEPTABLE_PRICE, GmxFields.EXECUTION_FEE, GmxFields.CALLBACK_GAS_LIMIT,
            GmxFields.MIN_OUTPUT_AMOUNT, GmxFields.UPDATED_AT_TIME, GmxFields.VALID_FROM_TIME, GmxFields.SRC_CHAIN_ID
        ];
        for (uint256 i = 0; i < uints.length; i++) ds.setUint(GmxKeys.field(key, uints[i]), 0);
        bytes32[4] memory bools = [GmxFields.IS_LONG, GmxFields.SHOULD_UNWRAP_NATIVE_TOKEN, GmxFields.IS_FROZEN, GmxFields.AUTO_CANCEL];
        for (uint256 i = 0; i < bools.length; i++) ds.setBool(GmxKeys.field(key, bools[i]), false);
        ds.removeBytes32(GmxKeys.ORDER_LIST, key);
        ds.removeBytes32(GmxKeys.accountOrderList(account), key);
    }

    function getPosition(IGmxDataStore ds, bytes32 key) internal view returns (GmxTypes.PositionProps memory p) {
        p.addresses.account = ds.getAddress(GmxKeys.field(key, GmxFields.ACCOUNT));
        p.addresses.market = ds.getAddress(GmxKeys.field(key, GmxFields.MARKET));
        p.addresses.collateralToken = ds.getAddress(GmxKeys.field(key, GmxFields.COLLATERAL_TOKEN));
        p.numbers.sizeInUsd = ds.getUint(GmxKeys.field(key, GmxFields.SIZE_IN_USD));
        p.numbers.sizeInTokens = ds.getUint(GmxKeys.field(key, GmxFields.SIZE_IN_TOKENS));
        p.numbers.collateralAmount = ds.getUint(GmxKeys.field(key, GmxFields.COLLATERAL_AMOUNT));
        p.numbers.pendingImpactAmount = ds.getInt(GmxKeys.field(key, GmxFields.PENDING_IMPACT_AMOUNT));
        p.numbers.borrowingFactor = ds.getUint(GmxKeys.field(key, GmxFields.BORROWING_FACTOR));
        p.numbers.fundingFeeAmountPerSize = ds.getUint(GmxKeys.field(key, GmxFields.FUNDING_FEE_AMOUNT_PER_SIZE));
        p.numbers.longTokenClaimableFundingAmountPerSize = ds.getUint(GmxKeys.field(key, GmxFields.LONG_TOKEN_CLAIMABLE_FUNDING_AMOUNT_PER_SIZE));
        p.numbers.shortTokenClaimableFundingAmountPerSize = ds.getUint(GmxKeys.field(key, GmxFields.SHORT_TOKEN_CLAIMABLE_FUNDING_AMOUNT_PER_SIZE));
        p.numbers.increasedAtTime = ds.getUint(GmxKeys.field(key, GmxFields.INCREASED_AT_TIME));
        p.numbers.decreasedAtTime = ds.getUint(GmxKeys.field(key, GmxFields.DECREASED_AT_TIME));
        p.flags.isLong = ds.getBool(GmxKeys.field(key, GmxFields.IS_LONG));
    }

    function setPosition(IGmxDataStore ds, bytes32 key, GmxTypes.PositionProps memory p) internal {
        ds.setAddress(GmxKeys.field(key, GmxFields.ACCOUNT), p.addresses.account);
        ds.setAddress(GmxKeys.field(key, GmxFields.MARKET), p.addresses.market);
        ds.setAddress(GmxKeys.field(key, GmxFields.COLLATERAL_TOKEN), p.addresses.collateralToken);
        ds.setUint(GmxKeys.field(key, GmxFields.SIZE_IN_USD), p.numbers.sizeInUsd);
        ds.setUint(GmxKeys.field(key, GmxFields.SIZE_IN_TOKENS), p.numbers.sizeInTokens);
        ds.setUint(GmxKeys.field(key, GmxFields.COLLATERAL_AMOUNT), p.numbers.collateralAmount);
        ds.setInt(GmxKeys.field(key, GmxFields.PENDING_IMPACT_AMOUNT), p.numbers.pendingImpactAmount);
        ds.setUint(GmxKeys.field(key, GmxFields.BORROWING_FACTOR), p.numbers.borrowingFactor);
        ds.setUint(GmxKeys.field(key, GmxFields.FUNDING_FEE_AMOUNT_PER_SIZE), p.numbers.fundingFeeAmountPerSize);
        ds.setUint(GmxKeys.field(key, GmxFields.LONG_TOKEN_CLAIMABLE_FUNDING_AMOUNT_PER_SIZE), p.numbers.longTokenClaimableFundingAmountPerSize);
        ds.setUint(GmxKeys.field(key, GmxFields.SHORT_TOKEN_CLAIMABLE_FUNDING_AMOUNT_PER_SIZE), p.numbers.shortTokenClaimableFundingAmountPerSize);
        ds.setUint(GmxKeys.field(key, GmxFields.INCREASED_AT_TIME), p.numbers.increasedAtTime);
        ds.setUint(GmxKeys.field(key, GmxFields.DECREASED_AT_TIME), p.numbers.decreasedAtTime);
        ds.setBool(GmxKeys.field(key, GmxFields.IS_LONG), p.flags.isLong);
        if (p.addresses.account == address(0)) return;
        ds.addBytes32(GmxKeys.POSITION_LIST, key);
        ds.addBytes32(GmxKeys.accountPositionList(p.addresses.account), key);
    }

    function removePosition(IGmxDataStore ds, bytes32 key, address account) internal {
        bytes32[3] memory addresses = [GmxFields.ACCOUNT, GmxFields.MARKET, GmxFields.COLLATERAL_TOKEN];
        for (uint256 i = 0; i < addresses.length; i++) ds.setAddress(GmxKeys.field(key, addresses[i]), address(0));
        bytes32[9] memory uints = [
            GmxFields.SIZE_IN_USD, GmxFields.SIZE_IN_TOKENS, GmxFields.COLLATERAL_AMOUNT, GmxFields.BORROWING_FACTOR,
            GmxFields.FUNDING_FEE_AMOUNT_PER_SIZE, GmxFields.LONG_TOKEN_CLAIMABLE_FUNDING_AMOUNT_PER_SIZE,
            GmxFields.SHORT_TOKEN_CLAIMABLE_FUNDING_AMOUNT_PER_SIZE, GmxFields.INCREASED_AT_TIME, GmxFields.DECREASED_AT_TIME
        ];
        for (uint256 i = 0; i < uints.length; i++) ds.setUint(GmxKeys.field(key, uints[i]), 0);
        ds.setInt(GmxKeys.field(key, GmxFields.PENDING_IMPACT_AMOUNT), 0);
        ds.setBool(GmxKeys.field(key, GmxFields.IS_LONG), false);
        ds.removeBytes32(GmxKeys.POSITION_LIST, key);
        ds.removeBytes32(GmxKeys.accountPositionList(account), key);
    }
}

/// The market math, GMX's formulas simplified as the README says. USD values carry 30 decimals; a token's price
/// is USD per smallest unit × 10^30.
library GmxMath {
    uint256 internal constant FLOAT_PRECISION = 1e30;
    /// Funding per size carries 15 more decimals than a factor (GMX's FLOAT_PRECISION_SQRT).
    uint256 internal constant FUNDING_PRECISION = 1e45;

    struct Funding {
        /// [side][token]: side 0 long, 1 short; token 0 the long token, 1 the short token.
        uint256[2][2] feePerSizeDelta;
        uint256[2][2] claimablePerSizeDelta;
        bool longsPayShorts;
        uint256 factorPerSecond;
    }

    function applyFactor(uint256 value, uint256 factor) internal pure returns (uint256) {
        return (value * factor) / FLOAT_PRECISION;
    }

    function toFactor(uint256 value, uint256 divisor) internal pure returns (uint256) {
        return divisor == 0 ? 0 : (value * FLOAT_PRECISION) / divisor;
    }

    /// value^(exponent/1e30) for whole exponents (1, 2, 3): the devnet sets only those.
    function applyExponent(uint256 value, uint256 exponent) internal pure returns (uint256 result) {
        uint256 n = exponent / FLOAT_PRECISION;
        if (n == 0) return value;
        result = value;
        for (uint256 i = 1; i < n; i++) result = (result * value) / FLOAT_PRECISION;
    }

    function openInterest(IGmxDataStore ds, GmxTypes.MarketProps memory m, bool isLong) internal view returns (uint256) {
        return ds.getUint(GmxKeys.marketTokenBool(GmxKeys.OPEN_INTEREST, m.marketToken, m.longToken, isLong))
            + ds.getUint(GmxKeys.marketTokenBool(GmxKeys.OPEN_INTEREST, m.marketToken, m.shortToken, isLong));
    }

    function openInterestInTokens(IGmxDataStore ds, GmxTypes.MarketProps memory m, bool isLong) internal view returns (uint256) {
        return ds.getUint(GmxKeys.marketTokenBool(GmxKeys.OPEN_INTEREST_IN_TOKENS, m.marketToken, m.longToken, isLong))
            + ds.getUint(GmxKeys.marketTokenBool(GmxKeys.OPEN_INTEREST_IN_TOKENS, m.marketToken, m.shortToken, isLong));
    }

    function poolAmount(IGmxDataStore ds, address market, address token) internal view returns (uint256) {
        return ds.getUint(GmxKeys.marketToken(GmxKeys.POOL_AMOUNT, market, token));
    }

    /// USD reserved for a side's positions: longs at the index price, shorts at their open interest.
    function reservedUsd(IGmxDataStore ds, GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory p, bool isLong) internal view returns (uint256) {
        return isLong ? openInterestInTokens(ds, m, true) * p.indexTokenPrice.max : openInterest(ds, m, false);
    }

    function poolUsd(IGmxDataStore ds, GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory p, bool isLong) internal view returns (uint256) {
        return isLong
            ? poolAmount(ds, m.marketToken, m.longToken) * p.longTokenPrice.min
            : poolAmount(ds, m.marketToken, m.shortToken) * p.shortTokenPrice.min;
    }

    /// BORROWING_FACTOR × (reserved USD / pool USD)^BORROWING_EXPONENT_FACTOR, per second.
    function borrowingFactorPerSecond(IGmxDataStore ds, GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory p, bool isLong)
        internal
        view
        returns (uint256)
    {
        uint256 pool = poolUsd(ds, m, p, isLong);
        if (pool == 0) return 0;
        uint256 exponent = ds.getUint(GmxKeys.marketBool(GmxKeys.BORROWING_EXPONENT_FACTOR, m.marketToken, isLong));
        uint256 ratio = toFactor(applyExponent(reservedUsd(ds, m, p, isLong), exponent), pool);
        return applyFactor(ratio, ds.getUint(GmxKeys.marketBool(GmxKeys.BORROWING_FACTOR, m.marketToken, isLong)));
    }

    /// The cumulative borrowing factor as of now (saved value + rate × time since it was saved).
    function nextCumulativeBorrowingFactor(IGmxDataStore ds, GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory p, bool isLong)
        internal
        view
        returns (uint256)
    {
        uint256 saved = ds.getUint(GmxKeys.marketBool(GmxKeys.CUMULATIVE_BORROWING_FACTOR, m.marketToken, isLong));
        uint256 updatedAt = ds.getUint(GmxKeys.marketBool(GmxKeys.CUMULATIVE_BORROWING_FACTOR_UPDATED_AT, m.marketToken, isLong));
        if (updatedAt == 0 || updatedAt >= block.timestamp) return saved;
        return saved + borrowingFactorPerSecond(ds, m, p, isLong) * (block.timestamp - updatedAt);
    }

    /// Funding since FUNDING_UPDATED_AT: the larger side pays FUNDING_FACTOR × (imbalance^exponent / total) per
    /// second on its size, in its collateral tokens pro rata; the other side's claimable grows by the same amounts.
    function nextFunding(IGmxDataStore ds, GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory p) internal view returns (Funding memory f) {
        uint256 longOi = openInterest(ds, m, true);
        uint256 shortOi = openInterest(ds, m, false);
        uint256 total = longOi + shortOi;
        uint256 diff = longOi > shortOi ? longOi - shortOi : shortOi - longOi;
        f.longsPayShorts = longOi > shortOi;
        if (diff == 0 || total == 0) return f;
        uint256 exponent = ds.getUint(GmxKeys.marketOnly(GmxKeys.FUNDING_EXPONENT_FACTOR, m.marketToken));
        f.factorPerSecond = applyFactor(toFactor(applyExponent(diff, exponent), total), ds.getUint(GmxKeys.marketOnly(GmxKeys.FUNDING_FACTOR, m.marketToken)));
        uint256 updatedAt = ds.getUint(GmxKeys.marketOnly(GmxKeys.FUNDING_UPDATED_AT, m.marketToken));
        if (updatedAt == 0 || updatedAt >= block.timestamp) return f;
        uint256 payerOi = f.longsPayShorts ? longOi : shortOi;
        uint256 fundingUsd = applyFactor(payerOi, (block.timestamp - updatedAt) * f.factorPerSecond);
        distributeFunding(ds, m, p, f, fundingUsd, payerOi, f.longsPayShorts ? shortOi : longOi);
    }

    /// The paying side's funding in each of its collateral tokens (pro rata to their open interest), per size
    /// of that collateral's open interest; the receiving side's claimable per size of its whole open interest.
    function distributeFunding(
        IGmxDataStore ds,
        GmxTypes.MarketProps memory m,
        GmxTypes.MarketPrices memory p,
        Funding memory f,
        uint256 fundingUsd,
        uint256 payerOi,
        uint256 receiverOi
    ) private view {
        uint256 payer = f.longsPayShorts ? 0 : 1;
        for (uint256 t = 0; t < 2; t++) {
            address token = t == 0 ? m.longToken : m.shortToken;
            uint256 price = t == 0 ? p.longTokenPrice.max : p.shortTokenPrice.max;
            uint256 oi = ds.getUint(GmxKeys.marketTokenBool(GmxKeys.OPEN_INTEREST, m.marketToken, token, payer == 0));
            if (oi == 0 || price == 0) continue;
            uint256 amount = (fundingUsd * oi) / payerOi / price;
            f.feePerSizeDelta[payer][t] = (amount * FUNDING_PRECISION) / oi;
            if (receiverOi > 0) f.claimablePerSizeDelta[1 - payer][t] = (amount * FUNDING_PRECISION) / receiverOi;
        }
    }

    /// Amount of a token owed for `sizeInUsd` between two funding-per-size values.
    function fundingAmount(uint256 latest, uint256 snapshot, uint256 sizeInUsd) internal pure returns (uint256) {
        if (latest <= snapshot) return 0;
        return (sizeInUsd * (latest - snapshot)) / FUNDING_PRECISION;
    }

    /// The current funding-per-size values of (market, token, side) with the pending delta added.
    function fundingPerSize(IGmxDataStore ds, address market, address token, bool isLong, uint256 delta) internal view returns (uint256) {
        return ds.getUint(GmxKeys.marketTokenBool(GmxKeys.FUNDING_FEE_AMOUNT_PER_SIZE, market, token, isLong)) + delta;
    }

    function claimablePerSize(IGmxDataStore ds, address market, address token, bool isLong, uint256 delta) internal view returns (uint256) {
        return ds.getUint(GmxKeys.marketTokenBool(GmxKeys.CLAIMABLE_FUNDING_AMOUNT_PER_SIZE, market, token, isLong)) + delta;
    }

    /// GMX's position price impact of changing a side's open interest by `sizeDeltaUsd` (signed), in USD:
    /// factor × (|imbalance before|^exponent − |imbalance after|^exponent), positive when the balance improves,
    /// capped by MAX_POSITION_IMPACT_FACTOR × |size delta| (and the positive side by the impact pool's value).
    function priceImpactUsd(IGmxDataStore ds, GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory p, bool isLong, int256 sizeDeltaUsd)
        internal
        view
        returns (int256)
    {
        uint256 longOi = openInterest(ds, m, true);
        uint256 shortOi = openInterest(ds, m, false);
        uint256 nextLong = isLong ? uint256(int256(longOi) + sizeDeltaUsd) : longOi;
        uint256 nextShort = isLong ? shortOi : uint256(int256(shortOi) + sizeDeltaUsd);
        uint256 initialDiff = longOi > shortOi ? longOi - shortOi : shortOi - longOi;
        uint256 nextDiff = nextLong > nextShort ? nextLong - nextShort : nextShort - nextLong;
        int256 impact = (longOi >= shortOi) == (nextLong >= nextShort)
            ? sameSideImpact(ds, m.marketToken, initialDiff, nextDiff)
            : int256(impactOf(ds, m.marketToken, initialDiff, true)) - int256(impactOf(ds, m.marketToken, nextDiff, false));
        return capImpact(ds, m.marketToken, p, impact, sizeDeltaUsd < 0 ? uint256(-sizeDeltaUsd) : uint256(sizeDeltaUsd));
    }

    /// factor × diff^exponent with the factor and exponent of that sign.
    function impactOf(IGmxDataStore ds, address market, uint256 diff, bool positive) private view returns (uint256) {
        uint256 e = ds.getUint(GmxKeys.marketBool(GmxKeys.POSITION_IMPACT_EXPONENT_FACTOR, market, positive));
        return applyFactor(applyExponent(diff, e), ds.getUint(GmxKeys.marketBool(GmxKeys.POSITION_IMPACT_FACTOR, market, positive)));
    }

    function sameSideImpact(IGmxDataStore ds, address market, uint256 initialDiff, uint256 nextDiff) private view returns (int256) {
        bool positive = nextDiff < initialDiff;
        uint256 e = ds.getUint(GmxKeys.marketBool(GmxKeys.POSITION_IMPACT_EXPONENT_FACTOR, market, positive));
        uint256 a = applyExponent(initialDiff, e);
        uint256 b = applyExponent(nextDiff, e);
        uint256 delta = applyFactor(a > b ? a - b : b - a, ds.getUint(GmxKeys.marketBool(GmxKeys.POSITION_IMPACT_FACTOR, market, positive)));
        return positive ? int256(delta) : -int256(delta);
    }

    function capImpact(IGmxDataStore ds, address market, GmxTypes.MarketPrices memory p, int256 impact, uint256 absSize) private view returns (int256) {
        if (impact > 0) {
            uint256 cap = applyFactor(absSize, ds.getUint(GmxKeys.marketBool(GmxKeys.MAX_POSITION_IMPACT_FACTOR, market, true)));
            uint256 poolCap = ds.getUint(GmxKeys.marketOnly(GmxKeys.POSITION_IMPACT_POOL_AMOUNT, market)) * p.indexTokenPrice.min;
            if (poolCap < cap) cap = poolCap;
            if (uint256(impact) > cap) return int256(cap);
        } else if (impact < 0) {
            uint256 cap = applyFactor(absSize, ds.getUint(GmxKeys.marketBool(GmxKeys.MAX_POSITION_IMPACT_FACTOR, market, false)));
            if (uint256(-impact) > cap) return -int256(cap);
        }
        return impact;
    }

    /// A decrease's execution price: the index price moved by the impact's share of the size (GMX's formula).
    function decreaseExecutionPrice(uint256 price, uint256 sizeDeltaUsd, int256 impactUsd, bool isLong) internal pure returns (uint256) {
        if (sizeDeltaUsd == 0) return price;
        int256 adjusted = isLong ? impactUsd : -impactUsd;
        int256 next = int256(price) + (int256(price) * adjusted) / int256(sizeDeltaUsd);
        return next < 0 ? 0 : uint256(next);
    }

    /// PositionUtils.getPositionPnlUsd's base PnL of the whole position at `price`: long tokens×price − size.
    function positionPnlUsd(uint256 sizeInUsd, uint256 sizeInTokens, uint256 price, bool isLong) internal pure returns (int256) {
        int256 value = int256(sizeInTokens * price);
        return isLong ? value - int256(sizeInUsd) : int256(sizeInUsd) - value;
    }

    /// The prices a decrease realizes its PnL at: longs at the index's min, shorts at its max.
    function pnlPrice(GmxTypes.MarketPrices memory p, bool isLong) internal pure returns (uint256) {
        return isLong ? p.indexTokenPrice.min : p.indexTokenPrice.max;
    }

    function collateralPrice(GmxTypes.MarketProps memory m, GmxTypes.MarketPrices memory p, address token) internal pure returns (GmxTypes.PriceProps memory) {
        return token == m.longToken ? p.longTokenPrice : p.shortTokenPrice;
    }
}

/// Role checks against the RoleStore, as GMX's RoleModule.
abstract contract GmxRoleModule {
    IGmxRoleStore public immutable roleStore;

    constructor(IGmxRoleStore roleStore_) {
        roleStore = roleStore_;
    }

    modifier onlyRole(bytes32 role, string memory name) {
        if (!roleStore.hasRole(msg.sender, role)) revert GmxErrors.Unauthorized(msg.sender, name);
        _;
    }
}
