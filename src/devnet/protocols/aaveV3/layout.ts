import { encodeDeployData, getContractAddress, type Address, type Hex } from 'viem';
import { CREATE2_DEPLOYER, devnetPriceFeedDeployData } from '../../contracts.ts';
import { AAVE_ARTIFACTS, linkBytecode, type AaveArtifact } from './artifacts.ts';
import { AAVE_V3_SALT, BASE_CURRENCY_UNIT, MARKET_ID, PRICE_DECIMALS, RESERVES, USD_FEED_ANSWER, type ReserveParameters } from './parameters.ts';

/** A contract the CREATE2 deployer puts at an address that follows from the salt and its init code alone. */
export interface Create2Contract {
  label: string;
  initCode: Hex;
  address: Address;
}

/** A listed asset: its parameters, the devnet token it is and the contracts made for it. */
export interface ReserveLayout extends ReserveParameters {
  asset: Address;
  priceFeed: Create2Contract;
  interestRateStrategy: Create2Contract;
}

/**
 * Every address of the deployment, known before anything is sent. Contracts whose constructors do not read
 * msg.sender are CREATE2 (owners and admins go in as arguments or are set afterwards); the two proxies are
 * created by the PoolAddressesProvider itself (`new`, so at its own nonces 1 and 2: setPoolImpl comes first).
 */
export interface AaveV3Layout {
  deployer: Address;
  usdFeed: Create2Contract;
  reserves: readonly ReserveLayout[];
  poolAddressesProvider: Create2Contract;
  aclManager: Create2Contract;
  /** Logic libraries, in an order that deploys each after the ones it links (FlashLoanLogic links BorrowLogic). */
  libraries: readonly Create2Contract[];
  poolImplementation: Create2Contract;
  poolConfiguratorImplementation: Create2Contract;
  oracle: Create2Contract;
  protocolDataProvider: Create2Contract;
  aTokenImplementation: Create2Contract;
  stableDebtTokenImplementation: Create2Contract;
  variableDebtTokenImplementation: Create2Contract;
  uiPoolDataProvider: Create2Contract;
  /** InitializableImmutableAdminUpgradeabilityProxy created by setPoolImpl: the provider's nonce 1. */
  pool: Address;
  /** …and by setPoolConfiguratorImpl: nonce 2. */
  poolConfigurator: Address;
}

function create2(label: string, initCode: Hex): Create2Contract {
  return { label, initCode, address: getContractAddress({ opcode: 'CREATE2', from: CREATE2_DEPLOYER, salt: AAVE_V3_SALT, bytecode: initCode }) };
}

function deployData(a: AaveArtifact, args: readonly unknown[], libraries: Record<string, Address> = {}): Hex {
  return encodeDeployData({ abi: a.abi, bytecode: linkBytecode(a, libraries), args });
}

function feedContract(deployer: Address, description: string, answer: bigint): Create2Contract {
  return create2(`DevnetPriceFeed ${description}`, devnetPriceFeedDeployData({ decimals: PRICE_DECIMALS, description, answer, owner: deployer }));
}

/**
 * The USD feed of each listed asset (by symbol), as aaveV3Layout places them, without the rest of the layout (whose
 * init code takes ≈ 20 ms to hash): what the devnet's price configuration reads (devnet.ts).
 */
export function aaveV3PriceFeeds(deployer: Address): Record<string, Address> {
  return Object.fromEntries(RESERVES.map((r) => [r.symbol, feedContract(deployer, `${r.symbol} / USD`, r.priceUsd).address]));
}

const LIBRARY_ORDER = ['SupplyLogic', 'BorrowLogic', 'LiquidationLogic', 'EModeLogic', 'BridgeLogic', 'FlashLoanLogic', 'PoolLogic', 'ConfiguratorLogic'] as const;

/** The deployment for a deployer (owner of everything) and the devnet's token addresses, by symbol. */
export function aaveV3Layout(deployer: Address, tokens: Readonly<Record<string, Address | undefined>>): AaveV3Layout {
  const provider = create2('PoolAddressesProvider', deployData(AAVE_ARTIFACTS.PoolAddressesProvider, [MARKET_ID, deployer]));
  const feed = (description: string, answer: bigint) => feedContract(deployer, description, answer);

  const reserves = RESERVES.map((r): ReserveLayout => {
    const asset = tokens[r.symbol];
    if (!asset) throw new Error(`aaveV3: the devnet has no ${r.symbol} token to list`);
    const s = r.strategy;
    return {
      ...r,
      asset,
      priceFeed: feed(`${r.symbol} / USD`, r.priceUsd),
      interestRateStrategy: create2(
        `DefaultReserveInterestRateStrategy ${s.name}`,
        deployData(AAVE_ARTIFACTS.DefaultReserveInterestRateStrategy, [
          provider.address,
          s.optimalUsageRatio,
          s.baseVariableBorrowRate,
          s.variableRateSlope1,
          s.variableRateSlope2,
          s.stableRateSlope1,
          s.stableRateSlope2,
          s.baseStableRateOffset,
          s.stableRateExcessOffset,
          s.optimalStableToTotalDebtRatio,
        ]),
      ),
    };
  });

  const linked: Record<string, Address> = {};
  const libraries = LIBRARY_ORDER.map((name) => {
    const lib = create2(name, deployData(AAVE_ARTIFACTS[name], [], linked));
    linked[name] = lib.address;
    return lib;
  });

  const pool = getContractAddress({ opcode: 'CREATE', from: provider.address, nonce: 1n });
  const weth = reserves.find((r) => r.symbol === 'WETH');
  if (!weth) throw new Error('aaveV3: WETH is not among the reserves');
  const usdFeed = feed('USD / USD', USD_FEED_ANSWER);
  return {
    deployer,
    usdFeed,
    reserves,
    poolAddressesProvider: provider,
    aclManager: create2('ACLManager', deployData(AAVE_ARTIFACTS.ACLManager, [provider.address])),
    libraries,
    poolImplementation: create2('Pool implementation', deployData(AAVE_ARTIFACTS.Pool, [provider.address], linked)),
    poolConfiguratorImplementation: create2('PoolConfigurator implementation', deployData(AAVE_ARTIFACTS.PoolConfigurator, [], linked)),
    oracle: create2(
      'AaveOracle',
      deployData(AAVE_ARTIFACTS.AaveOracle, [
        provider.address,
        reserves.map((r) => r.asset),
        reserves.map((r) => r.priceFeed.address),
        '0x0000000000000000000000000000000000000000', // no fallback oracle
        '0x0000000000000000000000000000000000000000', // base currency USD (address 0, as Aave's USD markets)
        BASE_CURRENCY_UNIT,
      ]),
    ),
    protocolDataProvider: create2('AaveProtocolDataProvider', deployData(AAVE_ARTIFACTS.AaveProtocolDataProvider, [provider.address])),
    // The token implementations read the pool's ADDRESSES_PROVIDER in their constructors: after setPoolImpl.
    aTokenImplementation: create2('AToken implementation', deployData(AAVE_ARTIFACTS.AToken, [pool])),
    stableDebtTokenImplementation: create2('StableDebtToken implementation', deployData(AAVE_ARTIFACTS.StableDebtToken, [pool])),
    variableDebtTokenImplementation: create2('VariableDebtToken implementation', deployData(AAVE_ARTIFACTS.VariableDebtToken, [pool])),
    // The network's base token is ETH: its USD price is WETH's feed.
    uiPoolDataProvider: create2('UiPoolDataProviderV3', deployData(AAVE_ARTIFACTS.UiPoolDataProviderV3, [weth.priceFeed.address, usdFeed.address])),
    pool,
    poolConfigurator: getContractAddress({ opcode: 'CREATE', from: provider.address, nonce: 2n }),
  };
}
