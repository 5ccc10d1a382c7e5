import { parseAbi } from 'viem';

/**
 * The Uniswap v4 contracts pool-b-v4 reads and calls, as their own sources declare them: v4-core 1.0.2,
 * v4-periphery 1.0.3 (StateView, V4Quoter, IV4Router), UniversalRouter 2.0.0, Permit2 (IAllowanceTransfer).
 */

const POOL_KEY = 'struct PoolKey { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; }';
const PATH_KEY = 'struct PathKey { address intermediateCurrency; uint24 fee; int24 tickSpacing; address hooks; bytes hookData; }';

/** StateView (v4-periphery lens): a pool's state by its id. */
export const stateViewAbi = parseAbi([
  'function getSlot0(bytes32 poolId) view returns (uint160 sqrtPriceX96, int24 tick, uint24 protocolFee, uint24 lpFee)',
  'function getLiquidity(bytes32 poolId) view returns (uint128 liquidity)',
]);

/**
 * V4Quoter: simulates the swap in the PoolManager and reverts it, answering the amount and its gas. Not `view`
 * (it calls unlock), but an eth_call of it changes nothing; declared view here so it is read like one.
 */
export const v4QuoterAbi = parseAbi([
  POOL_KEY,
  PATH_KEY,
  'struct QuoteExactSingleParams { PoolKey poolKey; bool zeroForOne; uint128 exactAmount; bytes hookData; }',
  'struct QuoteExactParams { address exactCurrency; PathKey[] path; uint128 exactAmount; }',
  'function quoteExactInputSingle(QuoteExactSingleParams params) view returns (uint256 amountOut, uint256 gasEstimate)',
  'function quoteExactInput(QuoteExactParams params) view returns (uint256 amountOut, uint256 gasEstimate)',
  'function quoteExactOutputSingle(QuoteExactSingleParams params) view returns (uint256 amountIn, uint256 gasEstimate)',
  'function quoteExactOutput(QuoteExactParams params) view returns (uint256 amountIn, uint256 gasEstimate)',
  'error NotEnoughLiquidity(bytes32 poolId)',
  'error UnexpectedRevertBytes(bytes revertData)',
]);

/** UniversalRouter 2.0.0: `execute(commands, inputs, deadline)`, one input per command byte. */
export const universalRouterAbi = parseAbi(['function execute(bytes commands, bytes[] inputs, uint256 deadline) payable']);

/** Permit2's allowance half (IAllowanceTransfer): the on-chain allowance a router spends through. */
export const permit2Abi = parseAbi([
  'function approve(address token, address spender, uint160 amount, uint48 expiration)',
  'function allowance(address user, address token, address spender) view returns (uint160 amount, uint48 expiration, uint48 nonce)',
]);

/** The V4Router's parameter structs (IV4Router), as a V4_SWAP input's `params[i]` encode them. */
export const V4_ROUTER_PARAMS = {
  exactInSingle: '(address currency0, address currency1, uint24 fee, int24 tickSpacing, address hooks) poolKey, bool zeroForOne, uint128 amountIn, uint128 amountOutMinimum, bytes hookData',
  exactOutSingle: '(address currency0, address currency1, uint24 fee, int24 tickSpacing, address hooks) poolKey, bool zeroForOne, uint128 amountOut, uint128 amountInMaximum, bytes hookData',
  exactIn: 'address currencyIn, (address intermediateCurrency, uint24 fee, int24 tickSpacing, address hooks, bytes hookData)[] path, uint128 amountIn, uint128 amountOutMinimum',
  exactOut: 'address currencyOut, (address intermediateCurrency, uint24 fee, int24 tickSpacing, address hooks, bytes hookData)[] path, uint128 amountOut, uint128 amountInMaximum',
} as const;

/**
 * The errors a swap through the UniversalRouter can revert with, by contract: the router's own (UniversalRouter
 * 2.0.0, V4Router), Permit2's, the PoolManager's and its libraries' (v4-core), and the quoter's.
 */
export const swapErrorsAbi = parseAbi([
  // UniversalRouter / Dispatcher / Payments
  'error ExecutionFailed(uint256 commandIndex, bytes message)',
  'error TransactionDeadlinePassed()',
  'error LengthMismatch()',
  'error InvalidCommandType(uint256 commandType)',
  'error InsufficientETH()',
  'error InsufficientToken()',
  'error ContractLocked()',
  'error BalanceTooLow()',
  'error InvalidEthSender()',
  // V4Router / BaseActionsRouter / DeltaResolver
  'error V4TooLittleReceived(uint256 minAmountOutReceived, uint256 amountReceived)',
  'error V4TooMuchRequested(uint256 maxAmountInRequested, uint256 amountRequested)',
  'error UnsupportedAction(uint256 action)',
  'error InputLengthMismatch()',
  'error DeltaNotPositive(address currency)',
  'error DeltaNotNegative(address currency)',
  'error InsufficientBalance()',
  'error SafeCastOverflow()',
  // Permit2 (IAllowanceTransfer)
  'error AllowanceExpired(uint256 deadline)',
  'error InsufficientAllowance(uint256 amount)',
  // PoolManager and its libraries (v4-core)
  'error WrappedError(address target, bytes4 selector, bytes reason, bytes details)',
  'error PoolNotInitialized()',
  'error CurrencyNotSettled()',
  'error ManagerLocked()',
  'error AlreadyUnlocked()',
  'error NonzeroNativeValue()',
  'error SwapAmountCannotBeZero()',
  'error PriceLimitAlreadyExceeded(uint160 sqrtPriceCurrentX96, uint160 sqrtPriceLimitX96)',
  'error PriceLimitOutOfBounds(uint160 sqrtPriceLimitX96)',
  'error InvalidFeeForExactOut()',
  'error NativeTransferFailed()',
  'error ERC20TransferFailed()',
  'error HookCallFailed()',
  // V4Quoter
  'error NotEnoughLiquidity(bytes32 poolId)',
]);
