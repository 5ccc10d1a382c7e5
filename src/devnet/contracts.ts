import {
  concat,
  encodeAbiParameters,
  encodeDeployData,
  getContractAddress,
  keccak256,
  parseAbi,
  stringToHex,
  type Abi,
  type Address,
  type Hex,
} from 'viem';
import { entryPoint07Address } from 'viem/account-abstraction';
import entryPointArtifact from '@account-abstraction/contracts/artifacts/EntryPoint.json' with { type: 'json' };
import factoryArtifact from '@account-abstraction/contracts/artifacts/SimpleAccountFactory.json' with { type: 'json' };
import paymasterArtifact from '@account-abstraction/contracts/artifacts/VerifyingPaymaster.json' with { type: 'json' };
import stablecoinArtifact from './artifacts/TestStablecoin.json' with { type: 'json' };
import plainTokenArtifact from './artifacts/TestERC20.json' with { type: 'json' };
import erc1271WalletArtifact from './artifacts/TestERC1271Wallet.json' with { type: 'json' };
import counterArtifact from './artifacts/Counter.json' with { type: 'json' };
import gateArtifact from './artifacts/Gate.json' with { type: 'json' };
import wethArtifact from './artifacts/TestWETH9.json' with { type: 'json' };
import priceFeedArtifact from './artifacts/DevnetPriceFeed.json' with { type: 'json' };
import type { TokenSymbol } from '../config/chainConfig.ts';

/** The deterministic CREATE2 deployer anvil preinstalls (and most public chains have): call data = salt ‖ initCode. */
export const CREATE2_DEPLOYER: Address = '0x4e59b44847b379578588920ca78fbf26c0b4956c';

/** The salts the canonical v0.7 deployments used: with them we land on the public testnets' addresses. */
const ENTRY_POINT_SALT: Hex = '0x90d8084deab30c2a37c45e8d47f49f2f7965183cb6990a98943ef94940681de3';
const FACTORY_SALT: Hex = `0x${'00'.repeat(32)}`;
/** Our own contracts' salt: any fixed value; the init code (bytecode + constructor args) tells them apart. */
const DEVNET_SALT: Hex = keccak256(stringToHex('agent-wallet/devnet/v1'));

export const CANONICAL = {
  entryPoint: entryPoint07Address,
  simpleAccountFactory: '0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985',
  accountImplementation: '0x68641DE71cfEa5a5d0D29712449Ee254bb1400C2',
  senderCreator: '0xEFC2c1444eBCC4Db75e7613d20C6a62fF67A167C',
} as const satisfies Record<string, Address>;

// Typed ABIs for what the devnet and its tests call (the JSON artifacts are not `as const`).
/** The ERC-20 part every devnet token has (USDT is only this; USDC and aUSD add eip3009TokenAbi). */
export const testStablecoinAbi = parseAbi([
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
  'function totalSupply() view returns (uint256)',
  'function balanceOf(address) view returns (uint256)',
  'function allowance(address owner, address spender) view returns (uint256)',
  'function mint(address to, uint256 amount)',
  'function transfer(address to, uint256 amount) returns (bool)',
  'function approve(address spender, uint256 amount) returns (bool)',
  'function transferFrom(address from, address to, uint256 amount) returns (bool)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
]);
/** EIP-3009 and its EIP-712 domain, as contracts/TestStablecoin.sol and Circle's USDC v2.2 have them. */
export const eip3009TokenAbi = parseAbi([
  'function version() view returns (string)',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  'function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
]);
export const erc1271WalletAbi = parseAbi([
  'function owner() view returns (address)',
  'function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)',
]);
export const counterAbi = parseAbi([
  'function number() view returns (uint256)',
  'function lastCaller() view returns (address)',
  'function increment()',
  'function incrementBy(uint256 amount)',
  'function setNumber(uint256 newNumber)',
  'function fail() pure',
  'event Incremented(address caller, uint256 newValue)',
]);
export const gateAbi = parseAbi([
  'function open() view returns (bool)',
  'function passes() view returns (uint256)',
  'function setOpen(bool open_)',
  'function pass()',
]);
export const simpleAccountFactoryAbi = parseAbi([
  'function accountImplementation() view returns (address)',
  'function createAccount(address owner, uint256 salt) returns (address)',
  'function getAddress(address owner, uint256 salt) view returns (address)',
]);
export const verifyingPaymasterAbi = parseAbi([
  'function owner() view returns (address)',
  'function verifyingSigner() view returns (address)',
  'function entryPoint() view returns (address)',
  'function deposit() payable',
  'function getDeposit() view returns (uint256)',
  'function addStake(uint32 unstakeDelaySec) payable',
]);

/** The EIP-712 domain version of the devnet's EIP-3009 tokens (contracts/TestStablecoin.sol), "2" as USDC's. */
export const TEST_STABLECOIN_EIP712_VERSION = '2';

/**
 * The devnet's tokens and what each is deployed as: `stablecoin` a TestStablecoin (EIP-3009, payable through x402
 * `exact`, as USDC is on the real testnets), `erc20` a plain TestERC20 (as USDT is: x402 reaches it only through
 * Permit2, which we do not use), `weth` a TestWETH9 (WETH9 plus a public mint: the lending protocols' collateral).
 * The EIP-712 domain of a stablecoin is `{ name, version: TEST_STABLECOIN_EIP712_VERSION }`. `funded`: whole
 * tokens each funded account and the faucet hold.
 */
export type TestTokenKind = 'stablecoin' | 'erc20' | 'weth';
export const TEST_TOKENS: readonly { symbol: TokenSymbol; name: string; decimals: number; kind: TestTokenKind; funded: bigint }[] = [
  { symbol: 'USDC', name: 'USD Coin (agent-wallet test)', decimals: 6, kind: 'stablecoin', funded: 10_000_000n },
  { symbol: 'USDT', name: 'Tether USD (agent-wallet test)', decimals: 6, kind: 'erc20', funded: 10_000_000n },
  { symbol: 'aUSD', name: 'Agent USD (agent-wallet test)', decimals: 6, kind: 'stablecoin', funded: 10_000_000n },
  { symbol: 'WETH', name: 'Wrapped Ether (agent-wallet test)', decimals: 18, kind: 'weth', funded: 10_000n },
];
/** The payment tokens: what a chain may accept for payment (spec §2.7). WETH is collateral, never payment. */
export const isPaymentToken = (symbol: TokenSymbol): boolean => symbol !== 'WETH';

/** A contract deployed through the CREATE2 deployer: its address follows from salt and init code alone. */
export interface Create2Deployment {
  label: string;
  salt: Hex;
  initCode: Hex;
  address: Address;
}

function create2(label: string, salt: Hex, initCode: Hex): Create2Deployment {
  return { label, salt, initCode, address: getContractAddress({ opcode: 'CREATE2', from: CREATE2_DEPLOYER, salt, bytecode: initCode }) };
}

export const entryPointDeployment = create2('EntryPoint v0.7', ENTRY_POINT_SALT, entryPointArtifact.bytecode as Hex);
export const factoryDeployment = create2(
  'SimpleAccountFactory v0.7',
  FACTORY_SALT,
  concat([factoryArtifact.bytecode as Hex, encodeAbiParameters([{ type: 'address' }], [entryPointDeployment.address])]),
);
const TOKEN_ARTIFACTS = { stablecoin: stablecoinArtifact, erc20: plainTokenArtifact, weth: wethArtifact } as const;
export type TokenDeployment = Create2Deployment & (typeof TEST_TOKENS)[number] & { eip3009: boolean };
export const tokenDeployments: readonly TokenDeployment[] = TEST_TOKENS.map((t) => {
  const artifact = TOKEN_ARTIFACTS[t.kind];
  return {
    ...create2(
      `${artifact.contractName} ${t.symbol}`,
      DEVNET_SALT,
      encodeDeployData({ abi: artifact.abi as Abi, bytecode: artifact.bytecode as Hex, args: [t.name, t.symbol, t.decimals] }),
    ),
    ...t,
    eip3009: t.kind === 'stablecoin',
  };
});
export const counterDeployment = create2('Counter', DEVNET_SALT, counterArtifact.bytecode as Hex);
export const gateDeployment = create2('Gate', DEVNET_SALT, gateArtifact.bytecode as Hex);

/** A Chainlink-style feed (contracts/DevnetPriceFeed.sol) the devnet's lending protocols price with; `owner` sets answers. */
export const devnetPriceFeedAbi = parseAbi([
  'function decimals() view returns (uint8)',
  'function description() view returns (string)',
  'function owner() view returns (address)',
  'function latestAnswer() view returns (int256)',
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
  'function setAnswer(int256 answer)',
  'error NotOwner()',
]);
export function devnetPriceFeedDeployData(p: { decimals: number; description: string; answer: bigint; owner: Address }): Hex {
  return encodeDeployData({
    abi: priceFeedArtifact.abi as Abi,
    bytecode: priceFeedArtifact.bytecode as Hex,
    args: [p.decimals, p.description, p.answer, p.owner],
  });
}
/** The devnet's WETH (contracts/TestWETH9.sol): WETH9 plus a public mint. */
export const testWethAbi = parseAbi([
  'function deposit() payable',
  'function withdraw(uint256 wad)',
  'function mint(address to, uint256 amount)',
]);

/** Deploy data of a TestERC1271Wallet (tests deploy it; the devnet does not). */
export function erc1271WalletDeployData(owner: Address): Hex {
  return encodeDeployData({ abi: erc1271WalletArtifact.abi as Abi, bytecode: erc1271WalletArtifact.bytecode as Hex, args: [owner] });
}

/** The VerifyingPaymaster is Ownable (owner = msg.sender), so it is a plain CREATE: the deployer's nonce 0. */
export const PAYMASTER_DEPLOYER_NONCE = 0n;
export function paymasterAddress(deployer: Address): Address {
  return getContractAddress({ opcode: 'CREATE', from: deployer, nonce: PAYMASTER_DEPLOYER_NONCE });
}
export function paymasterDeployData(verifyingSigner: Address): Hex {
  return encodeDeployData({
    abi: paymasterArtifact.abi as Abi,
    bytecode: paymasterArtifact.bytecode as Hex,
    args: [entryPointDeployment.address, verifyingSigner],
  });
}
