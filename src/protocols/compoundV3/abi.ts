import { parseAbi } from 'viem';

/**
 * The part of the real Comet's ABI (compound-finance/comet: CometMainInterface, CometExtInterface, the public
 * storage getters of CometStorage) that a lending client calls, with the real signatures, return types, struct
 * layouts, events and errors. The devnet's DevnetComet implements every function here; written against this
 * list, a client works on the devnet and on a real Comet alike. (compoundV3.test.ts checks it against the real
 * signatures and against the compiled DevnetComet.)
 */
export const cometAbi = parseAbi([
  'struct AssetInfo { uint8 offset; address asset; address priceFeed; uint64 scale; uint64 borrowCollateralFactor; uint64 liquidateCollateralFactor; uint64 liquidationFactor; uint128 supplyCap; }',
  'struct TotalsBasic { uint64 baseSupplyIndex; uint64 baseBorrowIndex; uint64 trackingSupplyIndex; uint64 trackingBorrowIndex; uint104 totalSupplyBase; uint104 totalBorrowBase; uint40 lastAccrualTime; uint8 pauseFlags; }',

  // Supply and withdraw: the base asset (supply repays debt first; withdraw borrows past the supplied balance)
  // or a collateral asset. type(uint256).max: repay the whole borrow / withdraw the whole supplied base.
  'function supply(address asset, uint256 amount)',
  'function supplyTo(address dst, address asset, uint256 amount)',
  'function withdraw(address asset, uint256 amount)',
  'function withdrawTo(address to, address asset, uint256 amount)',
  'function accrueAccount(address account)',

  // Account views (balances include interest to now; isBorrowCollateralized/isLiquidatable use the last accrual).
  'function balanceOf(address owner) view returns (uint256)',
  'function borrowBalanceOf(address account) view returns (uint256)',
  'function collateralBalanceOf(address account, address asset) view returns (uint128)',
  'function userBasic(address) view returns (int104 principal, uint64 baseTrackingIndex, uint64 baseTrackingAccrued, uint16 assetsIn, uint8 _reserved)',
  'function userCollateral(address, address) view returns (uint128 balance, uint128 _reserved)',
  'function isBorrowCollateralized(address account) view returns (bool)',
  'function isLiquidatable(address account) view returns (bool)',

  // Market views.
  'function totalSupply() view returns (uint256)',
  'function totalBorrow() view returns (uint256)',
  'function totalsBasic() view returns (TotalsBasic)',
  'function totalsCollateral(address) view returns (uint128 totalSupplyAsset, uint128 _reserved)',
  'function getUtilization() view returns (uint256)',
  'function getSupplyRate(uint256 utilization) view returns (uint64)',
  'function getBorrowRate(uint256 utilization) view returns (uint64)',
  'function getPrice(address priceFeed) view returns (uint256)',
  'function getAssetInfo(uint8 i) view returns (AssetInfo)',
  'function getAssetInfoByAddress(address asset) view returns (AssetInfo)',
  'function isSupplyPaused() view returns (bool)',
  'function isWithdrawPaused() view returns (bool)',

  // Configuration.
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
  'function baseToken() view returns (address)',
  'function baseTokenPriceFeed() view returns (address)',
  'function baseScale() view returns (uint256)',
  'function baseBorrowMin() view returns (uint256)',
  'function numAssets() view returns (uint8)',
  'function baseIndexScale() view returns (uint64)',
  'function factorScale() view returns (uint64)',
  'function priceScale() view returns (uint64)',
  'function supplyKink() view returns (uint256)',
  'function supplyPerSecondInterestRateSlopeLow() view returns (uint256)',
  'function supplyPerSecondInterestRateSlopeHigh() view returns (uint256)',
  'function supplyPerSecondInterestRateBase() view returns (uint256)',
  'function borrowKink() view returns (uint256)',
  'function borrowPerSecondInterestRateSlopeLow() view returns (uint256)',
  'function borrowPerSecondInterestRateSlopeHigh() view returns (uint256)',
  'function borrowPerSecondInterestRateBase() view returns (uint256)',

  'event Supply(address indexed from, address indexed dst, uint256 amount)',
  'event Withdraw(address indexed src, address indexed to, uint256 amount)',
  'event SupplyCollateral(address indexed from, address indexed dst, address indexed asset, uint256 amount)',
  'event WithdrawCollateral(address indexed src, address indexed to, address indexed asset, uint256 amount)',
  'event Transfer(address indexed from, address indexed to, uint256 amount)',

  // Every error a real Comet (main and math) can raise, so a revert from either decodes by name; the devnet's
  // subset is in its README.
  'error Absurd()',
  'error AlreadyInitialized()',
  'error BadAsset()',
  'error BadDecimals()',
  'error BadDiscount()',
  'error BadMinimum()',
  'error BadPrice()',
  'error BorrowTooSmall()',
  'error BorrowCFTooLarge()',
  'error InsufficientReserves()',
  'error LiquidateCFTooLarge()',
  'error NoSelfTransfer()',
  'error NotCollateralized()',
  'error NotForSale()',
  'error NotLiquidatable()',
  'error Paused()',
  'error ReentrantCallBlocked()',
  'error SupplyCapExceeded()',
  'error TimestampTooLarge()',
  'error TooManyAssets()',
  'error TooMuchSlippage()',
  'error TransferInFailed()',
  'error TransferOutFailed()',
  'error Unauthorized()',
  'error InvalidUInt64()',
  'error InvalidUInt104()',
  'error InvalidUInt128()',
  'error InvalidInt104()',
  'error InvalidInt256()',
  'error NegativeNumber()',
]);
