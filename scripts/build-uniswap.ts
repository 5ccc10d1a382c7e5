/**
 * Extracts the Uniswap contracts the devnet deploys from the compiled artifacts npm ships, without installing the
 * packages (as devDependencies they would add ~515 MB to node_modules: swap-router-contracts pulls hardhat, the v4
 * packages and the UniversalRouter carry every test build). Each package is pinned by name, version and the
 * registry's sha512 integrity; its tarball is fetched with `npm pack` into ~/.cache/agent-wallet/npm-tarballs
 * (reused when its integrity matches), checked here with node:crypto, and only the needed files are extracted
 * (system `tar`). Writes:
 * - src/devnet/protocols/uniswap/artifacts/<Contract>.json = { contractName, source, abi, bytecode } (+ linkReferences
 *   where a library is linked; Permit2: its runtime code, which v4-periphery carries as a Solidity hex literal);
 * - src/devnet/protocols/uniswap/testnet-addresses.json: Sepolia's and Base Sepolia's addresses from
 *   @uniswap/sdk-core's CHAIN_TO_ADDRESSES_MAP and @uniswap/universal-router-sdk's CHAIN_CONFIGS (UniversalRouter 2.0).
 *
 * Deterministic: uniswap.artifacts.test.ts runs it with `--out <dir>` and compares with the committed files.
 * Usage: node bin/run-ts.js scripts/build-uniswap.ts [--out <dir>]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runInNewContext } from 'node:vm';
import { getAddress, keccak256, type Address, type Hex } from 'viem';
import { tarball, type Pinned } from './lib/npmTarball.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const PACKAGES = {
  v3Core: { name: '@uniswap/v3-core', version: '1.0.1', integrity: 'sha512-7pVk4hEm00j9tc71Y9+ssYpO6ytkeI0y7WE9P6UcmNzhxPePwyAxImuhVsTqWK9YFvzgtvzJHi64pBl4jUzKMQ==' },
  v3Periphery: { name: '@uniswap/v3-periphery', version: '1.4.4', integrity: 'sha512-S4+m+wh8HbWSO3DKk4LwUCPZJTpCugIsHrWR86m/OrUyvSqGDTXKFfc2sMuGXCZrD1ZqO3rhQsKgdWg3Hbb2Kw==' },
  swapRouter: { name: '@uniswap/swap-router-contracts', version: '1.3.1', integrity: 'sha512-mh/YNbwKb7Mut96VuEtL+Z5bRe0xVIbjjiryn+iMMrK2sFKhR4duk/86mEz0UO5gSx4pQIw9G5276P5heY/7Rg==' },
  v4Core: { name: '@uniswap/v4-core', version: '1.0.2', integrity: 'sha512-X15Tm2wWd+USAzEExMbo+g9naA6QN6mPgWm0MzDwRNlOfaNlepfUpSyt9RSrUfEODspwbyWbcLg6t5nwc/e7lg==' },
  v4Periphery: { name: '@uniswap/v4-periphery', version: '1.0.3', integrity: 'sha512-JxLL0Djv9XcMvI2PatEnWrCrxuEaYNVhHxstndBOP+aJfh1XLg5ec8SDZ0xyoVfg2ElJTvuKpBgnu90bNValsg==' },
  universalRouter: { name: '@uniswap/universal-router', version: '2.0.0', integrity: 'sha512-6V21kuf547hE1gLfLQ89gv41DMSJY1ZZKer/k7CBagNPJ0oDnUyme+qQPtdoWknyUgSKd1M6sDm/WpocjVmPlA==' },
  sdkCore: { name: '@uniswap/sdk-core', version: '7.19.4', integrity: 'sha512-jV9qVMMD6qvEATgfFnZ3QgrhIMv5lullzeGPWjyC4+sUctatft+1M+OtAZxxjbFm8NQfJA73hqIeFPOg4cUyoA==' },
  universalRouterSdk: { name: '@uniswap/universal-router-sdk', version: '5.13.0', integrity: 'sha512-eAk5or7kZMV2ZlVr+NN0taDOm8MQs9KMfSEwXvC4ggfufVuswux/uVk2sNFx7C69f2Pj6bXLkZHoNH4xv1eqiA==' },
} as const satisfies Record<string, Pinned>;
type PackageKey = keyof typeof PACKAGES;

/** Hardhat artifacts (`bytecode` a string) and Foundry ones (`bytecode.object`), as far as we read them. */
interface CompiledJson {
  abi: unknown[];
  bytecode: string | { object: string; linkReferences?: Record<string, unknown> };
  linkReferences?: Record<string, Record<string, { start: number; length: number }[]>>;
}

/**
 * The contracts the devnet deploys, each from one file of one package. Foundry builds: the plain variant (v4's
 * `.test` builds are non-IR and over the code size limit). The UniversalRouter: its `out/` (Foundry, via-IR, the
 * build its deploy scripts broadcast), not the hardhat `artifacts/` one. `abiOnly`: read, never deployed.
 */
const CONTRACTS: { name: string; pkg: PackageKey; file: string; abiOnly?: boolean }[] = [
  { name: 'UniswapV3Factory', pkg: 'v3Core', file: 'artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json' },
  { name: 'UniswapV3Pool', pkg: 'v3Core', file: 'artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json', abiOnly: true },
  { name: 'NFTDescriptor', pkg: 'v3Periphery', file: 'artifacts/contracts/libraries/NFTDescriptor.sol/NFTDescriptor.json' },
  { name: 'NonfungibleTokenPositionDescriptor', pkg: 'v3Periphery', file: 'artifacts/contracts/NonfungibleTokenPositionDescriptor.sol/NonfungibleTokenPositionDescriptor.json' },
  { name: 'NonfungiblePositionManager', pkg: 'v3Periphery', file: 'artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json' },
  { name: 'QuoterV2', pkg: 'v3Periphery', file: 'artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json' },
  { name: 'SwapRouter02', pkg: 'swapRouter', file: 'artifacts/contracts/SwapRouter02.sol/SwapRouter02.json' },
  { name: 'PoolManager', pkg: 'v4Core', file: 'out/PoolManager.sol/PoolManager.json' },
  { name: 'PoolModifyLiquidityTest', pkg: 'v4Core', file: 'out/PoolModifyLiquidityTest.sol/PoolModifyLiquidityTest.json' },
  { name: 'StateView', pkg: 'v4Periphery', file: 'foundry-out/StateView.sol/StateView.json' },
  { name: 'V4Quoter', pkg: 'v4Periphery', file: 'foundry-out/V4Quoter.sol/V4Quoter.json' },
  { name: 'UniversalRouter', pkg: 'universalRouter', file: 'out/UniversalRouter.sol/UniversalRouter.json' },
];
const PERMIT2_SOURCE = 'lib/permit2/test/utils/DeployPermit2.sol';
const PERMIT2_ABI_FILE = 'foundry-out/IAllowanceTransfer.sol/IAllowanceTransfer.default.json';
const POOL_ADDRESS_SOURCE = 'contracts/libraries/PoolAddress.sol';
const SDK_CORE_FILES = ['dist/cjs/src/addresses.js', 'dist/cjs/src/chains.js'];
const UR_SDK_CONSTANTS = 'dist/cjs/src/utils/constants.js';
/** The testnets whose addresses ship (config/chains.ts: ethereum = Sepolia, base = Base Sepolia). */
const TESTNETS = { ethereum: 11155111, base: 84532 } as const;
const UNIVERSAL_ROUTER_VERSION = '2.0';

const { values } = parseArgs({ options: { out: { type: 'string' } } });
const outDir = resolve(values.out ?? join(root, 'src/devnet/protocols/uniswap'));

const started = performance.now();
const work = mkdtempSync(join(tmpdir(), 'uniswap-artifacts-'));
let fetchMs = 0;
let tarballBytes = 0;
const fetchedNames: string[] = [];
/** Each package's wanted files, extracted under work/<key>/package/. */
const files = new Map<PackageKey, (file: string) => string>();
try {
  const wanted: Record<PackageKey, string[]> = {
    v3Core: [],
    v3Periphery: [POOL_ADDRESS_SOURCE],
    swapRouter: [],
    v4Core: [],
    v4Periphery: [PERMIT2_SOURCE, PERMIT2_ABI_FILE],
    universalRouter: [],
    sdkCore: SDK_CORE_FILES,
    universalRouterSdk: [UR_SDK_CONSTANTS],
  };
  for (const c of CONTRACTS) wanted[c.pkg].push(c.file);
  for (const [key, list] of Object.entries(wanted) as [PackageKey, string[]][]) {
    const p: Pinned = PACKAGES[key];
    const t0 = performance.now();
    const { path, fetched } = tarball(p);
    if (fetched) {
      fetchMs += performance.now() - t0;
      fetchedNames.push(`${p.name}@${p.version}`);
    }
    tarballBytes += statSync(path).size;
    const dir = join(work, key);
    mkdirSync(dir);
    execFileSync('tar', ['-xzf', path, '-C', dir, ...list.map((f) => `package/${f}`)], { stdio: ['ignore', 'ignore', 'inherit'] });
    const version = (JSON.parse(execFileSync('tar', ['-xzOf', path, 'package/package.json']).toString()) as { version: string }).version;
    if (version !== p.version) throw new Error(`${p.name}: the tarball says version ${version}, pinned ${p.version}`);
    files.set(key, (file) => readFileSync(join(dir, 'package', file), 'utf8'));
  }
  const read = (key: PackageKey, file: string) => files.get(key)!(file);
  const sourceOf = (key: PackageKey, file: string) => `${PACKAGES[key].name}@${PACKAGES[key].version} ${file}`;

  mkdirSync(join(outDir, 'artifacts'), { recursive: true });
  const write = (file: string, json: unknown, indent?: number) => writeFileSync(join(outDir, file), `${JSON.stringify(json, null, indent)}\n`);

  let poolInitCode: Hex | undefined;
  for (const c of CONTRACTS) {
    const compiled = JSON.parse(read(c.pkg, c.file)) as CompiledJson;
    const bytecode = (typeof compiled.bytecode === 'string' ? compiled.bytecode : compiled.bytecode.object) as Hex;
    const links = (typeof compiled.bytecode === 'string' ? compiled.linkReferences : compiled.bytecode.linkReferences) ?? {};
    if (c.name === 'UniswapV3Pool') poolInitCode = bytecode;
    const artifact = {
      contractName: c.name,
      source: sourceOf(c.pkg, c.file),
      abi: compiled.abi,
      ...(!c.abiOnly && { bytecode }),
      ...(!c.abiOnly && Object.keys(links).length > 0 && { linkReferences: links }),
    };
    write(`artifacts/${c.name}.json`, artifact);
    console.log(`${c.name}: ${c.abiOnly ? 'abi only' : `${(bytecode.length - 2) / 2} bytes of init code`}${Object.keys(links).length > 0 ? ', links a library' : ''}`);
  }

  // v3 pools' addresses are CREATE2 from the factory with this hash, which the periphery hard-codes: the pool the
  // factory deploys must be the one the periphery computes.
  const hashInSource = /POOL_INIT_CODE_HASH\s*=\s*(0x[0-9a-fA-F]{64})/.exec(read('v3Periphery', POOL_ADDRESS_SOURCE))?.[1];
  const poolInitCodeHash = keccak256(poolInitCode!);
  if (hashInSource?.toLowerCase() !== poolInitCodeHash) throw new Error(`keccak(UniswapV3Pool init code) ${poolInitCodeHash} differs from v3-periphery's POOL_INIT_CODE_HASH ${hashInSource}`);
  write('artifacts/UniswapV3PoolInitCodeHash.json', { poolInitCodeHash, source: sourceOf('v3Periphery', POOL_ADDRESS_SOURCE) });
  console.log(`UniswapV3Pool init code hash ${poolInitCodeHash} = v3-periphery's POOL_INIT_CODE_HASH`);

  // Permit2 is not on npm: v4-periphery's DeployPermit2.sol carries its runtime code (and its canonical address).
  const deployPermit2 = read('v4Periphery', PERMIT2_SOURCE);
  const runtime = /bytecode\s*=\s*hex"([0-9a-fA-F]+)"/.exec(deployPermit2)?.[1];
  const canonical = /PERMIT2_ADDRESS\s*=\s*(0x[0-9a-fA-F]{40})/.exec(deployPermit2)?.[1];
  if (!runtime || !canonical) throw new Error(`no Permit2 runtime code or address in ${PERMIT2_SOURCE}`);
  write('artifacts/Permit2.json', {
    contractName: 'Permit2',
    source: `${sourceOf('v4Periphery', PERMIT2_SOURCE)} (runtime code); abi: ${PERMIT2_ABI_FILE}`,
    canonicalAddress: getAddress(canonical),
    abi: (JSON.parse(read('v4Periphery', PERMIT2_ABI_FILE)) as CompiledJson).abi,
    deployedBytecode: `0x${runtime.toLowerCase()}`,
  });
  console.log(`Permit2: ${runtime.length / 2} bytes of runtime code`);

  write('testnet-addresses.json', testnetAddresses(read, getAddress(canonical)), 2);
} finally {
  rmSync(work, { recursive: true, force: true });
}
const fetched = fetchedNames.length > 0 ? `fetched ${fetchedNames.length} in ${Math.round(fetchMs)} ms` : 'all from the cache';
console.log(`tarballs: ${(tarballBytes / 1e6).toFixed(1)} MB (${fetched}); done in ${Math.round(performance.now() - started)} ms`);

/**
 * The SDKs' address tables, evaluated in an empty VM context with only the modules they require (the SDK's own
 * chains.js; for the router SDK's BigNumber constants, an inert stand-in for ethers).
 */
function testnetAddresses(read: (key: PackageKey, file: string) => string, permit2: Address) {
  const load = (code: string, modules: Record<string, unknown>): Record<string, unknown> => {
    const module = { exports: {} as Record<string, unknown> };
    const require = (name: string) => {
      if (!(name in modules)) throw new Error(`unexpected require('${name}')`);
      return modules[name];
    };
    runInNewContext(code, { module, exports: module.exports, require });
    return module.exports;
  };
  const chains = load(read('sdkCore', 'dist/cjs/src/chains.js'), {});
  const sdk = load(read('sdkCore', 'dist/cjs/src/addresses.js'), { './chains': chains }) as { CHAIN_TO_ADDRESSES_MAP: Record<number, Record<string, string>> };
  const big: Record<string, unknown> = {};
  big.pow = big.sub = () => big;
  const urSdk = load(read('universalRouterSdk', UR_SDK_CONSTANTS), { ethers: { BigNumber: { from: () => big } } }) as {
    CHAIN_CONFIGS: Record<number, { weth: string; routerConfigs: Record<string, { address: string }> }>;
  };
  const chainsOut: Record<string, unknown> = {};
  for (const [name, chainId] of Object.entries(TESTNETS)) {
    const a = sdk.CHAIN_TO_ADDRESSES_MAP[chainId];
    const ur = urSdk.CHAIN_CONFIGS[chainId];
    const need = (value: string | undefined, what: string): Address => {
      if (!value) throw new Error(`chain ${chainId}: no ${what} in the SDKs`);
      return getAddress(value);
    };
    chainsOut[name] = {
      chainId,
      uniswapV3: {
        factory: need(a?.v3CoreFactoryAddress, 'v3CoreFactoryAddress'),
        swapRouter02: need(a?.swapRouter02Address, 'swapRouter02Address'),
        quoterV2: need(a?.quoterAddress, 'quoterAddress'),
        positionManager: need(a?.nonfungiblePositionManagerAddress, 'nonfungiblePositionManagerAddress'),
        weth: need(ur?.weth, 'weth'),
      },
      uniswapV4: {
        poolManager: need(a?.v4PoolManagerAddress, 'v4PoolManagerAddress'),
        universalRouter: need(ur?.routerConfigs[UNIVERSAL_ROUTER_VERSION]?.address, `UniversalRouter ${UNIVERSAL_ROUTER_VERSION}`),
        permit2,
        v4Quoter: need(a?.v4QuoterAddress, 'v4QuoterAddress'),
        stateView: need(a?.v4StateView, 'v4StateView'),
        positionManager: need(a?.v4PositionManagerAddress, 'v4PositionManagerAddress'),
      },
    };
  }
  const pin = (key: PackageKey) => `${PACKAGES[key].name}@${PACKAGES[key].version}`;
  return {
    sources: {
      uniswapV3: `${pin('sdkCore')} CHAIN_TO_ADDRESSES_MAP; weth: ${pin('universalRouterSdk')} CHAIN_CONFIGS`,
      uniswapV4: `${pin('sdkCore')} CHAIN_TO_ADDRESSES_MAP; universalRouter: ${pin('universalRouterSdk')} CHAIN_CONFIGS routerConfigs["${UNIVERSAL_ROUTER_VERSION}"] (${pin('universalRouter')}); permit2: ${pin('v4Periphery')} ${PERMIT2_SOURCE}`,
    },
    chains: chainsOut,
  };
}
