import { stringToHex, toFunctionSignature, type Abi } from 'viem';
import { describe, expect, it } from 'vitest';
import { POSITION_MANAGER_REVERTS } from '../../../protocols/uniswapV3/positionErrors.ts';
import { poolFeeAbi, positionManagerAbi } from '../../../protocols/uniswapV3/positionManagerAbi.ts';
import { UNISWAP_ARTIFACTS as A } from '../uniswap/artifacts.ts';

/** The liquidity endpoints' hand-written ABIs and revert table against the compiled contracts the devnet deploys. */
const signatures = (abi: Abi) => new Set(abi.filter((x) => x.type === 'function').map((f) => toFunctionSignature(f as never)));

describe('pool-a-v3 liquidity against the v3 artifacts', () => {
  it('every position manager and pool function the family calls is in the compiled ABI, with the same types', () => {
    const npm = signatures(A.positionManager.abi as Abi);
    for (const f of signatures(positionManagerAbi)) expect(npm.has(f), f).toBe(true);
    const pool = signatures(A.pool.abi as Abi);
    for (const f of signatures(poolFeeAbi)) expect(pool.has(f), f).toBe(true);
  });

  it('every revert string of the table (3 characters or more: shorter ones would match anywhere) is in the position manager’s or the pool’s bytecode (inside the factory’s)', () => {
    // The pool is deployed by the factory: its code is inside the factory's.
    const code = `${A.positionManager.bytecode}${A.factory.bytecode}`.toLowerCase();
    const checked = Object.keys(POSITION_MANAGER_REVERTS).filter((s) => s.length >= 3);
    expect(checked.length).toBeGreaterThanOrEqual(9);
    for (const s of checked) expect(code.includes(stringToHex(s.slice(0, 32)).slice(2)), s).toBe(true);
  });
});
