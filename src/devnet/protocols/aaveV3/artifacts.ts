import type { Abi, Address, Hex } from 'viem';
import poolAddressesProvider from '@aave/core-v3/artifacts/contracts/protocol/configuration/PoolAddressesProvider.sol/PoolAddressesProvider.json' with { type: 'json' };
import aclManager from '@aave/core-v3/artifacts/contracts/protocol/configuration/ACLManager.sol/ACLManager.json' with { type: 'json' };
import pool from '@aave/core-v3/artifacts/contracts/protocol/pool/Pool.sol/Pool.json' with { type: 'json' };
import poolConfigurator from '@aave/core-v3/artifacts/contracts/protocol/pool/PoolConfigurator.sol/PoolConfigurator.json' with { type: 'json' };
import interestRateStrategy from '@aave/core-v3/artifacts/contracts/protocol/pool/DefaultReserveInterestRateStrategy.sol/DefaultReserveInterestRateStrategy.json' with { type: 'json' };
import aaveOracle from '@aave/core-v3/artifacts/contracts/misc/AaveOracle.sol/AaveOracle.json' with { type: 'json' };
import protocolDataProvider from '@aave/core-v3/artifacts/contracts/misc/AaveProtocolDataProvider.sol/AaveProtocolDataProvider.json' with { type: 'json' };
import aToken from '@aave/core-v3/artifacts/contracts/protocol/tokenization/AToken.sol/AToken.json' with { type: 'json' };
import stableDebtToken from '@aave/core-v3/artifacts/contracts/protocol/tokenization/StableDebtToken.sol/StableDebtToken.json' with { type: 'json' };
import variableDebtToken from '@aave/core-v3/artifacts/contracts/protocol/tokenization/VariableDebtToken.sol/VariableDebtToken.json' with { type: 'json' };
import supplyLogic from '@aave/core-v3/artifacts/contracts/protocol/libraries/logic/SupplyLogic.sol/SupplyLogic.json' with { type: 'json' };
import borrowLogic from '@aave/core-v3/artifacts/contracts/protocol/libraries/logic/BorrowLogic.sol/BorrowLogic.json' with { type: 'json' };
import liquidationLogic from '@aave/core-v3/artifacts/contracts/protocol/libraries/logic/LiquidationLogic.sol/LiquidationLogic.json' with { type: 'json' };
import eModeLogic from '@aave/core-v3/artifacts/contracts/protocol/libraries/logic/EModeLogic.sol/EModeLogic.json' with { type: 'json' };
import bridgeLogic from '@aave/core-v3/artifacts/contracts/protocol/libraries/logic/BridgeLogic.sol/BridgeLogic.json' with { type: 'json' };
import flashLoanLogic from '@aave/core-v3/artifacts/contracts/protocol/libraries/logic/FlashLoanLogic.sol/FlashLoanLogic.json' with { type: 'json' };
import poolLogic from '@aave/core-v3/artifacts/contracts/protocol/libraries/logic/PoolLogic.sol/PoolLogic.json' with { type: 'json' };
import configuratorLogic from '@aave/core-v3/artifacts/contracts/protocol/libraries/logic/ConfiguratorLogic.sol/ConfiguratorLogic.json' with { type: 'json' };
import uiPoolDataProvider from '@aave/periphery-v3/artifacts/contracts/misc/UiPoolDataProviderV3.sol/UiPoolDataProviderV3.json' with { type: 'json' };

/** Where hardhat left a library's address out of a bytecode: byte offsets of 20-byte placeholders, by source file and library. */
export type LinkReferences = Record<string, Record<string, readonly { start: number; length: number }[]>>;

/** What we use of a hardhat artifact: the ABI (untyped: JSON is not `as const`), creation bytecode, library slots. */
export interface AaveArtifact {
  contractName: string;
  abi: Abi;
  bytecode: Hex;
  linkReferences: LinkReferences;
}

const artifact = (json: { contractName: string; abi: unknown; bytecode: string; linkReferences: unknown }): AaveArtifact => ({
  contractName: json.contractName,
  abi: json.abi as Abi,
  bytecode: json.bytecode as Hex,
  linkReferences: json.linkReferences as LinkReferences,
});

/** The bytecode npm ships: @aave/core-v3 1.19.3 and @aave/periphery-v3 3.0.1 (package.json pins both). */
export const AAVE_ARTIFACTS = {
  PoolAddressesProvider: artifact(poolAddressesProvider),
  ACLManager: artifact(aclManager),
  Pool: artifact(pool),
  PoolConfigurator: artifact(poolConfigurator),
  DefaultReserveInterestRateStrategy: artifact(interestRateStrategy),
  AaveOracle: artifact(aaveOracle),
  AaveProtocolDataProvider: artifact(protocolDataProvider),
  AToken: artifact(aToken),
  StableDebtToken: artifact(stableDebtToken),
  VariableDebtToken: artifact(variableDebtToken),
  SupplyLogic: artifact(supplyLogic),
  BorrowLogic: artifact(borrowLogic),
  LiquidationLogic: artifact(liquidationLogic),
  EModeLogic: artifact(eModeLogic),
  BridgeLogic: artifact(bridgeLogic),
  FlashLoanLogic: artifact(flashLoanLogic),
  PoolLogic: artifact(poolLogic),
  ConfiguratorLogic: artifact(configuratorLogic),
  UiPoolDataProviderV3: artifact(uiPoolDataProvider),
} as const;
export type AaveContractName = keyof typeof AAVE_ARTIFACTS;

/** The libraries a bytecode needs, by name (e.g. Pool: SupplyLogic, BorrowLogic, …). */
export function requiredLibraries(a: AaveArtifact): string[] {
  return Object.values(a.linkReferences).flatMap((byName) => Object.keys(byName));
}

/**
 * Writes library addresses into an artifact's creation bytecode at the offsets its `linkReferences` give (what
 * hardhat's and ethers' linkers do). Every slot must still hold a placeholder, and every library must be given.
 */
export function linkBytecode(a: AaveArtifact, libraries: Readonly<Record<string, Address>>): Hex {
  let code = a.bytecode.slice(2);
  for (const [file, byName] of Object.entries(a.linkReferences)) {
    for (const [name, slots] of Object.entries(byName)) {
      const address = libraries[name];
      if (!address) throw new Error(`aaveV3: ${a.contractName} needs library ${name} (${file}) linked, and no address was given`);
      for (const { start, length } of slots) {
        const at = start * 2;
        if (length !== 20 || !code.startsWith('__$', at)) {
          throw new Error(`aaveV3: ${a.contractName}'s link slot for ${name} at byte ${start} holds no placeholder`);
        }
        code = code.slice(0, at) + address.slice(2).toLowerCase() + code.slice(at + 40);
      }
    }
  }
  if (code.includes('__$')) throw new Error(`aaveV3: ${a.contractName} still has an unlinked library placeholder`);
  return `0x${code}`;
}
