import { concat, encodeAbiParameters, parseAbi, zeroAddress, zeroHash, type Address, type Hex } from 'viem';
import type { Create2Deployment } from '../../contracts.ts';
import { create2, initCodeReturning, uniswapSalt, UNISWAP_ARTIFACTS as A, V3_POOL_INIT_CODE_HASH } from '../uniswap/artifacts.ts';

/** Uniswap v4's own salt (uniswap/artifacts.ts). */
export const UNISWAP_V4_SALT: Hex = uniswapSalt('uniswapV4');

export interface UniswapV4Contracts {
  poolManager: Create2Deployment;
  stateView: Create2Deployment;
  v4Quoter: Create2Deployment;
  modifyLiquidityRouter: Create2Deployment;
  permit2: Create2Deployment;
  universalRouter: Create2Deployment;
}
export const V4_CONTRACT_KEYS = ['poolManager', 'stateView', 'v4Quoter', 'modifyLiquidityRouter', 'permit2', 'universalRouter'] as const;

const address = { type: 'address' } as const;

/** UniversalRouter 2.0.0's constructor argument (its RouterParameters struct: no spokePool, which 2.1 added). */
const ROUTER_PARAMETERS = {
  type: 'tuple',
  components: [
    { name: 'permit2', type: 'address' },
    { name: 'weth9', type: 'address' },
    { name: 'v2Factory', type: 'address' },
    { name: 'v3Factory', type: 'address' },
    { name: 'pairInitCodeHash', type: 'bytes32' },
    { name: 'poolInitCodeHash', type: 'bytes32' },
    { name: 'v4PoolManager', type: 'address' },
    { name: 'v3NFTPositionManager', type: 'address' },
    { name: 'v4PositionManager', type: 'address' },
  ],
} as const;

/**
 * The devnet's v4 contracts, in deployment order. The PoolManager is owned by `owner` (its constructor argument:
 * protocol fees, which the devnet never sets). Permit2 is its runtime code behind a minimal init code (npm has no
 * Permit2 init code), so it is not at the canonical address; its EIP-712 domain is recomputed off its own
 * address (the code caches chain 1's). The UniversalRouter routes v3 (the devnet's factory and pools) and v4; no
 * v2, and no v4 PositionManager (its v3→v4 migration commands then revert).
 */
export function uniswapV4Contracts(p: { owner: Address; weth: Address; v3Factory: Address; v3PositionManager: Address }): UniswapV4Contracts {
  const withArgs = (bytecode: unknown, arg: Hex): Hex => concat([bytecode as Hex, arg]);
  const managerArg = (manager: Address) => encodeAbiParameters([address], [manager]);
  const poolManager = create2('PoolManager', UNISWAP_V4_SALT, withArgs(A.poolManager.bytecode, encodeAbiParameters([address], [p.owner])));
  const stateView = create2('StateView', UNISWAP_V4_SALT, withArgs(A.stateView.bytecode, managerArg(poolManager.address)));
  const v4Quoter = create2('V4Quoter', UNISWAP_V4_SALT, withArgs(A.v4Quoter.bytecode, managerArg(poolManager.address)));
  const modifyLiquidityRouter = create2('PoolModifyLiquidityTest', UNISWAP_V4_SALT, withArgs(A.modifyLiquidityTest.bytecode, managerArg(poolManager.address)));
  const permit2 = create2('Permit2', UNISWAP_V4_SALT, initCodeReturning(A.permit2.deployedBytecode as Hex));
  const universalRouter = create2(
    'UniversalRouter',
    UNISWAP_V4_SALT,
    withArgs(
      A.universalRouter.bytecode,
      encodeAbiParameters(
        [ROUTER_PARAMETERS],
        [
          {
            permit2: permit2.address,
            weth9: p.weth,
            v2Factory: zeroAddress,
            v3Factory: p.v3Factory,
            pairInitCodeHash: zeroHash,
            poolInitCodeHash: V3_POOL_INIT_CODE_HASH,
            v4PoolManager: poolManager.address,
            v3NFTPositionManager: p.v3PositionManager,
            v4PositionManager: zeroAddress,
          },
        ],
      ),
    ),
  );
  return { poolManager, stateView, v4Quoter, modifyLiquidityRouter, permit2, universalRouter };
}

// Typed ABIs (the interfaces' signatures): what the deployment and its tests call.
export const poolManagerAbi = parseAbi([
  'struct PoolKey { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; }',
  'function initialize(PoolKey key, uint160 sqrtPriceX96) returns (int24 tick)',
  'function owner() view returns (address)',
]);
export const stateViewAbi = parseAbi([
  'function getSlot0(bytes32 poolId) view returns (uint160 sqrtPriceX96, int24 tick, uint24 protocolFee, uint24 lpFee)',
  'function getLiquidity(bytes32 poolId) view returns (uint128 liquidity)',
]);
export const modifyLiquidityRouterAbi = parseAbi([
  'struct PoolKey { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; }',
  'struct ModifyLiquidityParams { int24 tickLower; int24 tickUpper; int256 liquidityDelta; bytes32 salt; }',
  'function modifyLiquidity(PoolKey key, ModifyLiquidityParams params, bytes hookData) payable returns (int256 delta)',
]);
export const v4QuoterAbi = parseAbi([
  'struct PoolKey { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; }',
  'struct QuoteExactSingleParams { PoolKey poolKey; bool zeroForOne; uint128 exactAmount; bytes hookData; }',
  'function quoteExactInputSingle(QuoteExactSingleParams params) returns (uint256 amountOut, uint256 gasEstimate)',
]);
export const permit2Abi = parseAbi([
  'function approve(address token, address spender, uint160 amount, uint48 expiration)',
  'function allowance(address user, address token, address spender) view returns (uint160 amount, uint48 expiration, uint48 nonce)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
]);
export const universalRouterAbi = parseAbi(['function execute(bytes commands, bytes[] inputs, uint256 deadline) payable']);
