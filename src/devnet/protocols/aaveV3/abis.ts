import { parseAbi } from 'viem';

// Typed ABIs for what the deployment and its tests call, written from the npm artifacts' ABIs (abis.test.ts
// checks each item against them, so a typo here fails a test rather than a call).

export const poolAddressesProviderAbi = parseAbi([
  'function owner() view returns (address)',
  'function getMarketId() view returns (string)',
  'function getACLAdmin() view returns (address)',
  'function getACLManager() view returns (address)',
  'function getPool() view returns (address)',
  'function getPoolConfigurator() view returns (address)',
  'function getPriceOracle() view returns (address)',
  'function getPoolDataProvider() view returns (address)',
  'function setACLAdmin(address newAclAdmin)',
  'function setACLManager(address newAclManager)',
  'function setPoolImpl(address newPoolImpl)',
  'function setPoolConfiguratorImpl(address newPoolConfiguratorImpl)',
  'function setPriceOracle(address newPriceOracle)',
  'function setPoolDataProvider(address newDataProvider)',
]);

export const aclManagerAbi = parseAbi([
  'function isPoolAdmin(address admin) view returns (bool)',
  'function isEmergencyAdmin(address admin) view returns (bool)',
  'function addPoolAdmin(address admin)',
  'function addEmergencyAdmin(address admin)',
]);

export const poolAbi = parseAbi([
  'function ADDRESSES_PROVIDER() view returns (address)',
  'function FLASHLOAN_PREMIUM_TOTAL() view returns (uint128)',
  'function FLASHLOAN_PREMIUM_TO_PROTOCOL() view returns (uint128)',
  'function getReservesList() view returns (address[])',
  'function getConfiguration(address asset) view returns ((uint256 data))',
  'struct ReserveConfigurationMap { uint256 data; }',
  'struct ReserveData { ReserveConfigurationMap configuration; uint128 liquidityIndex; uint128 currentLiquidityRate; uint128 variableBorrowIndex; uint128 currentVariableBorrowRate; uint128 currentStableBorrowRate; uint40 lastUpdateTimestamp; uint16 id; address aTokenAddress; address stableDebtTokenAddress; address variableDebtTokenAddress; address interestRateStrategyAddress; uint128 accruedToTreasury; uint128 unbacked; uint128 isolationModeTotalDebt; }',
  'function getReserveData(address asset) view returns (ReserveData)',
  'function getUserAccountData(address user) view returns (uint256 totalCollateralBase, uint256 totalDebtBase, uint256 availableBorrowsBase, uint256 currentLiquidationThreshold, uint256 ltv, uint256 healthFactor)',
  'function supply(address asset, uint256 amount, address onBehalfOf, uint16 referralCode)',
  'function borrow(address asset, uint256 amount, uint256 interestRateMode, uint16 referralCode, address onBehalfOf)',
  'function repay(address asset, uint256 amount, uint256 interestRateMode, address onBehalfOf) returns (uint256)',
  'function withdraw(address asset, uint256 amount, address to) returns (uint256)',
]);

export const poolConfiguratorAbi = parseAbi([
  'struct InitReserveInput { address aTokenImpl; address stableDebtTokenImpl; address variableDebtTokenImpl; uint8 underlyingAssetDecimals; address interestRateStrategyAddress; address underlyingAsset; address treasury; address incentivesController; string aTokenName; string aTokenSymbol; string variableDebtTokenName; string variableDebtTokenSymbol; string stableDebtTokenName; string stableDebtTokenSymbol; bytes params; }',
  'function initReserves(InitReserveInput[] input)',
  'function configureReserveAsCollateral(address asset, uint256 ltv, uint256 liquidationThreshold, uint256 liquidationBonus)',
  'function setReserveBorrowing(address asset, bool enabled)',
  'function setReserveFlashLoaning(address asset, bool enabled)',
  'function setReserveFactor(address asset, uint256 newReserveFactor)',
  'function setLiquidationProtocolFee(address asset, uint256 newFee)',
  'function updateFlashloanPremiumTotal(uint128 newFlashloanPremiumTotal)',
  'function updateFlashloanPremiumToProtocol(uint128 newFlashloanPremiumToProtocol)',
]);

export const aaveOracleAbi = parseAbi([
  'function BASE_CURRENCY() view returns (address)',
  'function BASE_CURRENCY_UNIT() view returns (uint256)',
  'function getSourceOfAsset(address asset) view returns (address)',
  'function getAssetPrice(address asset) view returns (uint256)',
]);

export const aaveProtocolDataProviderAbi = parseAbi([
  'function getReserveTokensAddresses(address asset) view returns (address aTokenAddress, address stableDebtTokenAddress, address variableDebtTokenAddress)',
  'function getUserReserveData(address asset, address user) view returns (uint256 currentATokenBalance, uint256 currentStableDebt, uint256 currentVariableDebt, uint256 principalStableDebt, uint256 scaledVariableDebt, uint256 stableBorrowRate, uint256 liquidityRate, uint40 stableRateLastUpdated, bool usageAsCollateralEnabled)',
]);

export const uiPoolDataProviderV3Abi = parseAbi([
  'struct AggregatedReserveData { address underlyingAsset; string name; string symbol; uint256 decimals; uint256 baseLTVasCollateral; uint256 reserveLiquidationThreshold; uint256 reserveLiquidationBonus; uint256 reserveFactor; bool usageAsCollateralEnabled; bool borrowingEnabled; bool stableBorrowRateEnabled; bool isActive; bool isFrozen; uint128 liquidityIndex; uint128 variableBorrowIndex; uint128 liquidityRate; uint128 variableBorrowRate; uint128 stableBorrowRate; uint40 lastUpdateTimestamp; address aTokenAddress; address stableDebtTokenAddress; address variableDebtTokenAddress; address interestRateStrategyAddress; uint256 availableLiquidity; uint256 totalPrincipalStableDebt; uint256 averageStableRate; uint256 stableDebtLastUpdateTimestamp; uint256 totalScaledVariableDebt; uint256 priceInMarketReferenceCurrency; address priceOracle; uint256 variableRateSlope1; uint256 variableRateSlope2; uint256 stableRateSlope1; uint256 stableRateSlope2; uint256 baseStableBorrowRate; uint256 baseVariableBorrowRate; uint256 optimalUsageRatio; bool isPaused; bool isSiloedBorrowing; uint128 accruedToTreasury; uint128 unbacked; uint128 isolationModeTotalDebt; uint256 debtCeiling; uint256 debtCeilingDecimals; uint8 eModeCategoryId; uint256 borrowCap; uint256 supplyCap; uint16 eModeLtv; uint16 eModeLiquidationThreshold; uint16 eModeLiquidationBonus; address eModePriceSource; string eModeLabel; bool borrowableInIsolation; }',
  'struct BaseCurrencyInfo { uint256 marketReferenceCurrencyUnit; int256 marketReferenceCurrencyPriceInUsd; int256 networkBaseTokenPriceInUsd; uint8 networkBaseTokenPriceDecimals; }',
  'struct UserReserveData { address underlyingAsset; uint256 scaledATokenBalance; bool usageAsCollateralEnabledOnUser; uint256 stableBorrowRate; uint256 scaledVariableDebt; uint256 principalStableDebt; uint256 stableBorrowLastUpdateTimestamp; }',
  'function getReservesData(address provider) view returns (AggregatedReserveData[], BaseCurrencyInfo)',
  'function getUserReservesData(address provider, address user) view returns (UserReserveData[], uint8)',
  'function networkBaseTokenPriceInUsdProxyAggregator() view returns (address)',
  'function marketReferenceCurrencyPriceInUsdProxyAggregator() view returns (address)',
]);
