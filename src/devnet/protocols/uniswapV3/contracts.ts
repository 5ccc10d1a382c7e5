import { concat, encodeAbiParameters, getContractAddress, keccak256, parseAbi, stringToHex, zeroAddress, type Address, type Hex } from 'viem';
import type { Create2Deployment } from '../../contracts.ts';
import { create2, linkLibraries, uniswapSalt, UNISWAP_ARTIFACTS as A, V3_POOL_INIT_CODE_HASH } from '../uniswap/artifacts.ts';

/** Uniswap v3's own salt (uniswap/artifacts.ts): every address follows from the init code and it alone. */
export const UNISWAP_V3_SALT: Hex = uniswapSalt('uniswapV3');

export interface UniswapV3Contracts {
  factory: Create2Deployment;
  nftDescriptor: Create2Deployment;
  positionDescriptor: Create2Deployment;
  positionManager: Create2Deployment;
  swapRouter02: Create2Deployment;
  quoterV2: Create2Deployment;
}
export const V3_CONTRACT_KEYS = ['factory', 'nftDescriptor', 'positionDescriptor', 'positionManager', 'swapRouter02', 'quoterV2'] as const;

const args = (types: string[], values: unknown[]): Hex => encodeAbiParameters(types.map((type) => ({ type })), values);

/**
 * The devnet's v3 contracts, in deployment order, around the chain's WETH (the WETH9 of the position manager, the
 * router and the quoter). The factory's owner is the CREATE2 deployer (its msg.sender), so no fee tier beyond the
 * three its constructor enables (500, 3000, 10000) can be added.
 */
export function uniswapV3Contracts(weth: Address): UniswapV3Contracts {
  const factory = create2('UniswapV3Factory', UNISWAP_V3_SALT, A.factory.bytecode as Hex);
  const nftDescriptor = create2('NFTDescriptor', UNISWAP_V3_SALT, A.nftDescriptor.bytecode as Hex);
  const descriptorCode = linkLibraries(A.positionDescriptor.bytecode as Hex, A.positionDescriptor.linkReferences, { NFTDescriptor: nftDescriptor.address });
  const positionDescriptor = create2(
    'NonfungibleTokenPositionDescriptor',
    UNISWAP_V3_SALT,
    concat([descriptorCode, args(['address', 'bytes32'], [weth, stringToHex('ETH', { size: 32 })])]),
  );
  const positionManager = create2(
    'NonfungiblePositionManager',
    UNISWAP_V3_SALT,
    concat([A.positionManager.bytecode as Hex, args(['address', 'address', 'address'], [factory.address, weth, positionDescriptor.address])]),
  );
  // No v2 factory: the devnet has no v2 pools.
  const swapRouter02 = create2(
    'SwapRouter02',
    UNISWAP_V3_SALT,
    concat([A.swapRouter02.bytecode as Hex, args(['address', 'address', 'address', 'address'], [zeroAddress, factory.address, positionManager.address, weth])]),
  );
  const quoterV2 = create2('QuoterV2', UNISWAP_V3_SALT, concat([A.quoterV2.bytecode as Hex, args(['address', 'address'], [factory.address, weth])]));
  return { factory, nftDescriptor, positionDescriptor, positionManager, swapRouter02, quoterV2 };
}

/** A v3 pool's address: CREATE2 from the factory, salted with (token0, token1, fee), PoolAddress.computeAddress. */
export function v3PoolAddress(factory: Address, tokenA: Address, tokenB: Address, fee: number): Address {
  const [token0, token1] = BigInt(tokenA) < BigInt(tokenB) ? [tokenA, tokenB] : [tokenB, tokenA];
  const salt = keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'address' }, { type: 'uint24' }], [token0, token1, fee]));
  return getContractAddress({ opcode: 'CREATE2', from: factory, salt, bytecodeHash: V3_POOL_INIT_CODE_HASH });
}

// Typed ABIs (the interfaces' signatures; the JSON artifacts are not `as const`): what the deployment and its tests call.
export const v3FactoryAbi = parseAbi([
  'function owner() view returns (address)',
  'function feeAmountTickSpacing(uint24 fee) view returns (int24)',
  'function getPool(address tokenA, address tokenB, uint24 fee) view returns (address pool)',
]);
export const v3PoolAbi = parseAbi([
  'function slot0() view returns (uint160 sqrtPriceX96, int24 tick, uint16 observationIndex, uint16 observationCardinality, uint16 observationCardinalityNext, uint8 feeProtocol, bool unlocked)',
  'function liquidity() view returns (uint128)',
  'function token0() view returns (address)',
  'function token1() view returns (address)',
  'function fee() view returns (uint24)',
]);
export const v3PositionManagerAbi = parseAbi([
  'struct MintParams { address token0; address token1; uint24 fee; int24 tickLower; int24 tickUpper; uint256 amount0Desired; uint256 amount1Desired; uint256 amount0Min; uint256 amount1Min; address recipient; uint256 deadline; }',
  'function createAndInitializePoolIfNecessary(address token0, address token1, uint24 fee, uint160 sqrtPriceX96) payable returns (address pool)',
  'function mint(MintParams params) payable returns (uint256 tokenId, uint128 liquidity, uint256 amount0, uint256 amount1)',
  'function factory() view returns (address)',
  'function WETH9() view returns (address)',
  'function balanceOf(address owner) view returns (uint256)',
]);
export const swapRouter02Abi = parseAbi([
  'struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient; uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }',
  'function exactInputSingle(ExactInputSingleParams params) payable returns (uint256 amountOut)',
  'function factory() view returns (address)',
  'function positionManager() view returns (address)',
  'function WETH9() view returns (address)',
]);
export const quoterV2Abi = parseAbi([
  'struct QuoteExactInputSingleParams { address tokenIn; address tokenOut; uint256 amountIn; uint24 fee; uint160 sqrtPriceLimitX96; }',
  'function quoteExactInputSingle(QuoteExactInputSingleParams params) returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)',
]);
