import { describe, expect, test } from 'vitest';
import { type Abi, type AbiFunction, type AbiParameter } from 'viem';
import { aaveOracleAbi, aaveProtocolDataProviderAbi, aclManagerAbi, poolAbi, poolAddressesProviderAbi, poolConfiguratorAbi, uiPoolDataProviderV3Abi } from './abis.ts';
import { AAVE_ARTIFACTS, linkBytecode, requiredLibraries, type AaveContractName } from './artifacts.ts';
import { decodeReserveConfiguration } from './reserveConfiguration.ts';

/** A parameter's type with tuples spelled out and names dropped: what the selector and the decoding depend on. */
const typeOf = (p: AbiParameter): string =>
  'components' in p && p.components ? `(${p.components.map(typeOf).join(',')})${p.type.slice('tuple'.length)}` : p.type;
const shape = (f: AbiFunction) => `${f.name}(${f.inputs.map(typeOf).join(',')}) ${f.stateMutability} returns (${f.outputs.map(typeOf).join(',')})`;

const OURS: [AaveContractName, Abi][] = [
  ['PoolAddressesProvider', poolAddressesProviderAbi],
  ['ACLManager', aclManagerAbi],
  ['Pool', poolAbi],
  ['PoolConfigurator', poolConfiguratorAbi],
  ['AaveOracle', aaveOracleAbi],
  ['AaveProtocolDataProvider', aaveProtocolDataProviderAbi],
  ['UiPoolDataProviderV3', uiPoolDataProviderV3Abi],
];

describe('the typed ABIs', () => {
  test.each(OURS)('%s: every function is the artifact’s, inputs, outputs and mutability', (name, ours) => {
    const theirs = new Set(AAVE_ARTIFACTS[name].abi.filter((i): i is AbiFunction => i.type === 'function').map(shape));
    const functions = ours.filter((i): i is AbiFunction => i.type === 'function');
    expect(functions.length).toBeGreaterThan(0);
    for (const f of functions) expect(theirs.has(shape(f)), `${name}.${shape(f)}`).toBe(true);
  });
});

describe('linkBytecode', () => {
  test('Pool links its seven logic libraries and FlashLoanLogic links BorrowLogic', () => {
    expect(requiredLibraries(AAVE_ARTIFACTS.Pool).sort()).toEqual(
      ['BorrowLogic', 'BridgeLogic', 'EModeLogic', 'FlashLoanLogic', 'LiquidationLogic', 'PoolLogic', 'SupplyLogic'].sort(),
    );
    expect(requiredLibraries(AAVE_ARTIFACTS.FlashLoanLogic)).toEqual(['BorrowLogic']);
    expect(requiredLibraries(AAVE_ARTIFACTS.PoolConfigurator)).toEqual(['ConfiguratorLogic']);
  });

  test('writes each address at every slot, and refuses a missing library', () => {
    const libraries = Object.fromEntries(
      requiredLibraries(AAVE_ARTIFACTS.Pool).map((name, i) => [name, `0x${(i + 1).toString(16).padStart(2, '0').repeat(20)}` as const]),
    );
    const linked = linkBytecode(AAVE_ARTIFACTS.Pool, libraries);
    expect(linked.length).toBe(AAVE_ARTIFACTS.Pool.bytecode.length);
    expect(linked).not.toContain('__$');
    for (const byName of Object.values(AAVE_ARTIFACTS.Pool.linkReferences)) {
      for (const [name, slots] of Object.entries(byName)) {
        for (const { start } of slots) expect(`0x${linked.slice(2 + start * 2, 2 + start * 2 + 40)}`).toBe(libraries[name]);
      }
    }
    const { SupplyLogic: _left, ...missing } = libraries;
    expect(() => linkBytecode(AAVE_ARTIFACTS.Pool, missing)).toThrow('Pool needs library SupplyLogic');
  });
});

test('decodeReserveConfiguration reads the bitmap as ReserveConfiguration.sol lays it out', () => {
  const data =
    8000n | (8250n << 16n) | (10500n << 32n) | (18n << 48n) | (1n << 56n) | (1n << 58n) | (1n << 63n) | (1500n << 64n) | (7n << 80n) | (9n << 116n) | (1000n << 152n);
  expect(decodeReserveConfiguration(data)).toEqual({
    ltv: 8000,
    liquidationThreshold: 8250,
    liquidationBonus: 10500,
    decimals: 18,
    active: true,
    frozen: false,
    borrowingEnabled: true,
    stableBorrowingEnabled: false,
    paused: false,
    flashLoanEnabled: true,
    reserveFactor: 1500,
    borrowCap: 7n,
    supplyCap: 9n,
    liquidationProtocolFee: 1000,
  });
});
