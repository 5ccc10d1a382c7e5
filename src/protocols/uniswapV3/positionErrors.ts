/**
 * The revert strings of a liquidity action that errors.ts's V3_REVERTS (the router's, the pool's swap checks and
 * the shared transfer helpers') does not name: NonfungiblePositionManager's (v3-periphery 1.4.4) and the pool's
 * checks of a position (v3-core 1.0.1). Keyed by the string; the name is ours (the contracts have none), the
 * message what the source's check means. The family decodes with `decodeV3Revert(data, POSITION_MANAGER_REVERTS)`.
 */
export const POSITION_MANAGER_REVERTS: Readonly<Record<string, { name: string; message: string }>> = {
  'Price slippage check': { name: 'PriceSlippageCheck', message: 'the tokens added or removed fell below amount0_min / amount1_min: the price moved past the slippage allowed' },
  'Not approved': { name: 'NotApproved', message: 'the caller neither owns the position NFT nor is approved for it' },
  'Invalid token ID': { name: 'InvalidTokenId', message: 'no position has that token id' },
  'Not cleared': { name: 'NotCleared', message: 'a position can be burned only once its liquidity and owed tokens are zero' },
  TLU: { name: 'TickLowerNotBelowUpper', message: 'the range’s lower tick is not below its upper tick' },
  TLM: { name: 'TickLowerTooLow', message: 'the lower tick is below the minimum tick' },
  TUM: { name: 'TickUpperTooHigh', message: 'the upper tick is above the maximum tick' },
  LO: { name: 'LiquidityOverflow', message: 'the ticks would hold more liquidity than the pool allows per tick' },
  M0: { name: 'MintToken0NotPaid', message: 'the pool did not receive the token0 the mint owed' },
  M1: { name: 'MintToken1NotPaid', message: 'the pool did not receive the token1 the mint owed' },
  T: { name: 'TickOutOfRange', message: 'a tick outside [-887272, 887272]' },
  'ERC721: owner query for nonexistent token': { name: 'NonexistentToken', message: 'no position NFT has that token id' },
  'ERC721: operator query for nonexistent token': { name: 'NonexistentToken', message: 'no position NFT has that token id' },
};
