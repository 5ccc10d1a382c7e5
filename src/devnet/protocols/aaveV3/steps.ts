import {
  BaseError,
  concat,
  ContractFunctionZeroDataError,
  encodeFunctionData,
  getAddress,
  maxUint256,
  parseUnits,
  zeroAddress,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { CREATE2_DEPLOYER, testStablecoinAbi } from '../../contracts.ts';
import { aaveOracleAbi, aclManagerAbi, poolAbi, poolAddressesProviderAbi, poolConfiguratorAbi } from './abis.ts';
import type { AaveV3Layout, Create2Contract, ReserveLayout } from './layout.ts';
import { AAVE_V3_SALT, FLASHLOAN_PREMIUM_TO_PROTOCOL, FLASHLOAN_PREMIUM_TOTAL, reserveTokenNames } from './parameters.ts';
import { decodeReserveConfiguration, type ReserveConfiguration } from './reserveConfiguration.ts';
import type { PlannedTransaction } from '../sender.ts';

/**
 * One piece of the deployment. `plan` reads the chain and returns the transactions still missing for it
 * (none: it is in place); it throws when the chain holds something else there (another deployment, nothing
 * to finish). Plans are made for all steps at once, before anything is sent, so a step's plan must hold once
 * the steps before it have run: every step only adds to what earlier ones made, and reads nothing they change
 * in a way that would alter its own plan.
 */
export interface DeploymentStep {
  label: string;
  plan(): Promise<PlannedTransaction[]>;
}

/** EIP-1967's implementation slot: where Aave's InitializableImmutableAdminUpgradeabilityProxy keeps its logic contract. */
const IMPLEMENTATION_SLOT: Hex = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** The deployment, in order: Aave's own sequence (aave-v3-deploy's scripts), then the devnet's seed liquidity. */
export function aaveV3Steps(chainName: string, client: PublicClient, layout: AaveV3Layout): DeploymentStep[] {
  const conflict = (message: string): never => {
    throw new Error(`${chainName}: aaveV3: ${message}: the chain holds another Aave deployment (reset the devnet data dir)`);
  };
  const hasCode = async (address: Address): Promise<boolean> => ((await client.getCode({ address })) ?? '0x') !== '0x';
  /** A view call on a contract that may not exist yet: undefined when there is no code. */
  const readIfDeployed = async <T>(read: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await read();
    } catch (error) {
      if (error instanceof BaseError && error.walk((e) => e instanceof ContractFunctionZeroDataError)) return undefined;
      throw error;
    }
  };

  const create2Step = (c: Create2Contract, verify?: () => Promise<void>): DeploymentStep => ({
    label: c.label,
    plan: async () => {
      if (await hasCode(c.address)) {
        await verify?.();
        return [];
      }
      return [{ what: `deploying ${c.label}`, to: CREATE2_DEPLOYER, data: concat([AAVE_V3_SALT, c.initCode]) }];
    },
  });

  const provider = layout.poolAddressesProvider.address;
  type ProviderGetter = 'getACLAdmin' | 'getACLManager' | 'getPool' | 'getPoolConfigurator' | 'getPriceOracle' | 'getPoolDataProvider';
  type ProviderSetter = 'setACLAdmin' | 'setACLManager' | 'setPoolImpl' | 'setPoolConfiguratorImpl' | 'setPriceOracle' | 'setPoolDataProvider';
  /** A PoolAddressesProvider entry: unset (0) is missing, another address is someone else's deployment. */
  const providerStep = (
    label: string,
    [getter, expected]: [ProviderGetter, Address],
    [setter, argument]: [ProviderSetter, Address],
    verify?: () => Promise<void>,
  ): DeploymentStep => ({
    label,
    plan: async () => {
      const current = await readIfDeployed(() => client.readContract({ address: provider, abi: poolAddressesProviderAbi, functionName: getter }));
      if (current === undefined || current === zeroAddress) {
        return [{ what: `${setter}(${argument})`, to: provider, data: encodeFunctionData({ abi: poolAddressesProviderAbi, functionName: setter, args: [argument] }) }];
      }
      if (!same(current, expected)) conflict(`PoolAddressesProvider.${getter}() is ${current}, expected ${expected}`);
      await verify?.();
      return [];
    },
  });
  /** A proxy the provider made must still run our implementation (calling its setter again would upgrade it). */
  const runsImplementation = (proxy: Address, implementation: Address, name: string) => async (): Promise<void> => {
    const slot = (await client.getStorageAt({ address: proxy, slot: IMPLEMENTATION_SLOT })) ?? '0x';
    const current = getAddress(`0x${slot.slice(2).padStart(64, '0').slice(24)}`);
    if (!same(current, implementation)) conflict(`the ${name} proxy runs ${current}, expected ${implementation}`);
  };

  const aclRoleStep = (label: string, isRole: 'isPoolAdmin' | 'isEmergencyAdmin', add: 'addPoolAdmin' | 'addEmergencyAdmin'): DeploymentStep => ({
    label,
    plan: async () => {
      const has = await readIfDeployed(() => client.readContract({ address: layout.aclManager.address, abi: aclManagerAbi, functionName: isRole, args: [layout.deployer] }));
      if (has === true) return [];
      return [{ what: `${add}(deployer)`, to: layout.aclManager.address, data: encodeFunctionData({ abi: aclManagerAbi, functionName: add, args: [layout.deployer] }) }];
    },
  });

  const premiumStep = (label: string, getter: 'FLASHLOAN_PREMIUM_TOTAL' | 'FLASHLOAN_PREMIUM_TO_PROTOCOL', value: bigint): DeploymentStep => ({
    label,
    plan: async () => {
      if ((await readIfDeployed(() => client.readContract({ address: layout.pool, abi: poolAbi, functionName: getter }))) === value) return [];
      const data =
        getter === 'FLASHLOAN_PREMIUM_TOTAL'
          ? encodeFunctionData({ abi: poolConfiguratorAbi, functionName: 'updateFlashloanPremiumTotal', args: [value] })
          : encodeFunctionData({ abi: poolConfiguratorAbi, functionName: 'updateFlashloanPremiumToProtocol', args: [value] });
      return [{ what: `${label} = ${value} bp`, to: layout.poolConfigurator, data }];
    },
  });

  const reserveData = (asset: Address) => readIfDeployed(() => client.readContract({ address: layout.pool, abi: poolAbi, functionName: 'getReserveData', args: [asset] }));

  const initReservesStep: DeploymentStep = {
    label: `reserves ${layout.reserves.map((r) => r.symbol).join(', ')} initialized`,
    plan: async () => {
      const data = await Promise.all(layout.reserves.map((r) => reserveData(r.asset)));
      const missing = layout.reserves.filter((r, i) => {
        const d = data[i];
        if (!d || d.aTokenAddress === zeroAddress) return true;
        if (!same(d.interestRateStrategyAddress, r.interestRateStrategy.address)) {
          conflict(`reserve ${r.symbol} uses the interest rate strategy ${d.interestRateStrategyAddress}, expected ${r.interestRateStrategy.address}`);
        }
        return false;
      });
      if (missing.length === 0) return [];
      const input = missing.map((r) => ({
        aTokenImpl: layout.aTokenImplementation.address,
        stableDebtTokenImpl: layout.stableDebtTokenImplementation.address,
        variableDebtTokenImpl: layout.variableDebtTokenImplementation.address,
        underlyingAssetDecimals: r.decimals,
        interestRateStrategyAddress: r.interestRateStrategy.address,
        underlyingAsset: r.asset,
        // No Collector: the reserve factor's share accrues to the deployer.
        treasury: layout.deployer,
        incentivesController: zeroAddress,
        ...reserveTokenNames(r.symbol),
        params: '0x' as Hex,
      }));
      return [
        {
          what: `initReserves(${missing.map((r) => r.symbol).join(', ')})`,
          to: layout.poolConfigurator,
          data: encodeFunctionData({ abi: poolConfiguratorAbi, functionName: 'initReserves', args: [input] }),
        },
      ];
    },
  };

  /**
   * Risk parameters as listed, one configurator call per part that differs (a crash may have left some set).
   * Before initReserves the configuration reads as all zero: every part is planned, as it will be needed.
   */
  const configureReserveStep = (r: ReserveLayout): DeploymentStep => ({
    label: `${r.symbol} risk parameters`,
    plan: async () => {
      const raw = await readIfDeployed(() => client.readContract({ address: layout.pool, abi: poolAbi, functionName: 'getConfiguration', args: [r.asset] }));
      const c: ReserveConfiguration = decodeReserveConfiguration(raw?.data ?? 0n);
      const call = (what: string, data: Hex): PlannedTransaction => ({ what: `${what}(${r.symbol})`, to: layout.poolConfigurator, data });
      const planned: PlannedTransaction[] = [];
      if (c.ltv !== r.ltv || c.liquidationThreshold !== r.liquidationThreshold || c.liquidationBonus !== r.liquidationBonus) {
        const args = [r.asset, BigInt(r.ltv), BigInt(r.liquidationThreshold), BigInt(r.liquidationBonus)] as const;
        planned.push(call('configureReserveAsCollateral', encodeFunctionData({ abi: poolConfiguratorAbi, functionName: 'configureReserveAsCollateral', args })));
      }
      if (!c.borrowingEnabled) {
        planned.push(call('setReserveBorrowing', encodeFunctionData({ abi: poolConfiguratorAbi, functionName: 'setReserveBorrowing', args: [r.asset, true] })));
      }
      if (!c.flashLoanEnabled) {
        planned.push(call('setReserveFlashLoaning', encodeFunctionData({ abi: poolConfiguratorAbi, functionName: 'setReserveFlashLoaning', args: [r.asset, true] })));
      }
      if (c.reserveFactor !== r.reserveFactor) {
        planned.push(call('setReserveFactor', encodeFunctionData({ abi: poolConfiguratorAbi, functionName: 'setReserveFactor', args: [r.asset, BigInt(r.reserveFactor)] })));
      }
      if (c.liquidationProtocolFee !== r.liquidationProtocolFee) {
        const args = [r.asset, BigInt(r.liquidationProtocolFee)] as const;
        planned.push(call('setLiquidationProtocolFee', encodeFunctionData({ abi: poolConfiguratorAbi, functionName: 'setLiquidationProtocolFee', args })));
      }
      return planned;
    },
  });

  /** The deployer's own supply: liquidity to borrow from the start. It never withdraws, so a balance means seeded. */
  const seedStep = (r: ReserveLayout): DeploymentStep => ({
    label: `${r.symbol} seed supply (${r.seedSupply} ${r.symbol})`,
    plan: async () => {
      const aToken = (await reserveData(r.asset))?.aTokenAddress ?? zeroAddress;
      if (aToken !== zeroAddress) {
        const supplied = await client.readContract({ address: aToken, abi: testStablecoinAbi, functionName: 'balanceOf', args: [layout.deployer] });
        if (supplied > 0n) return [];
      }
      const amount = parseUnits(r.seedSupply.toString(), r.decimals);
      // The devnet tokens' public mint (faucet tokens), then an ordinary supply.
      return [
        { what: `mint(${r.symbol})`, to: r.asset, data: encodeFunctionData({ abi: testStablecoinAbi, functionName: 'mint', args: [layout.deployer, amount] }) },
        { what: `approve(${r.symbol}, Pool)`, to: r.asset, data: encodeFunctionData({ abi: testStablecoinAbi, functionName: 'approve', args: [layout.pool, maxUint256] }) },
        { what: `supply(${r.symbol})`, to: layout.pool, data: encodeFunctionData({ abi: poolAbi, functionName: 'supply', args: [r.asset, amount, layout.deployer, 0] }) },
      ];
    },
  });

  const verifyOracleSources = async (): Promise<void> => {
    for (const r of layout.reserves) {
      const source = await client.readContract({ address: layout.oracle.address, abi: aaveOracleAbi, functionName: 'getSourceOfAsset', args: [r.asset] });
      if (!same(source, r.priceFeed.address)) conflict(`AaveOracle prices ${r.symbol} with ${source}, expected ${r.priceFeed.address}`);
    }
  };
  const verifyProviderOwner = async (): Promise<void> => {
    const owner = await client.readContract({ address: provider, abi: poolAddressesProviderAbi, functionName: 'owner' });
    if (!same(owner, layout.deployer)) conflict(`PoolAddressesProvider's owner is ${owner}, expected ${layout.deployer}`);
  };

  return [
    ...layout.reserves.map((r) => create2Step(r.priceFeed)),
    create2Step(layout.usdFeed),
    create2Step(layout.poolAddressesProvider, verifyProviderOwner),
    // ACLManager's constructor makes the provider's ACL admin its DEFAULT_ADMIN: that is set first.
    providerStep('ACL admin', ['getACLAdmin', layout.deployer], ['setACLAdmin', layout.deployer]),
    create2Step(layout.aclManager),
    providerStep('ACLManager registered', ['getACLManager', layout.aclManager.address], ['setACLManager', layout.aclManager.address]),
    aclRoleStep('pool admin', 'isPoolAdmin', 'addPoolAdmin'),
    aclRoleStep('emergency admin', 'isEmergencyAdmin', 'addEmergencyAdmin'),
    ...layout.libraries.map((l) => create2Step(l)),
    create2Step(layout.poolImplementation),
    // The provider creates the proxy (its nonce 1) and calls initialize(provider) through it.
    providerStep(
      'Pool proxy',
      ['getPool', layout.pool],
      ['setPoolImpl', layout.poolImplementation.address],
      runsImplementation(layout.pool, layout.poolImplementation.address, 'Pool'),
    ),
    create2Step(layout.poolConfiguratorImplementation),
    providerStep(
      'PoolConfigurator proxy',
      ['getPoolConfigurator', layout.poolConfigurator],
      ['setPoolConfiguratorImpl', layout.poolConfiguratorImplementation.address],
      runsImplementation(layout.poolConfigurator, layout.poolConfiguratorImplementation.address, 'PoolConfigurator'),
    ),
    premiumStep('flash loan premium', 'FLASHLOAN_PREMIUM_TOTAL', FLASHLOAN_PREMIUM_TOTAL),
    premiumStep('flash loan premium to protocol', 'FLASHLOAN_PREMIUM_TO_PROTOCOL', FLASHLOAN_PREMIUM_TO_PROTOCOL),
    create2Step(layout.oracle, verifyOracleSources),
    providerStep('AaveOracle registered', ['getPriceOracle', layout.oracle.address], ['setPriceOracle', layout.oracle.address]),
    create2Step(layout.protocolDataProvider),
    providerStep(
      'AaveProtocolDataProvider registered',
      ['getPoolDataProvider', layout.protocolDataProvider.address],
      ['setPoolDataProvider', layout.protocolDataProvider.address],
    ),
    // Their constructors read the Pool proxy's ADDRESSES_PROVIDER: after setPoolImpl.
    create2Step(layout.aTokenImplementation),
    create2Step(layout.stableDebtTokenImplementation),
    create2Step(layout.variableDebtTokenImplementation),
    ...uniqueStrategies(layout.reserves).map((s) => create2Step(s)),
    initReservesStep,
    ...layout.reserves.map(configureReserveStep),
    ...layout.reserves.map(seedStep),
    create2Step(layout.uiPoolDataProvider),
  ];
}

/** Reserves may share a strategy (same init code, same address): deploy each once. */
function uniqueStrategies(reserves: readonly ReserveLayout[]): Create2Contract[] {
  const byAddress = new Map<Address, Create2Contract>();
  for (const r of reserves) byAddress.set(r.interestRateStrategy.address, r.interestRateStrategy);
  return [...byAddress.values()];
}
