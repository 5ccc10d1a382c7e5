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
import counterArtifact from './artifacts/Counter.json' with { type: 'json' };
import gateArtifact from './artifacts/Gate.json' with { type: 'json' };
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

export const TEST_TOKENS: readonly { symbol: TokenSymbol; name: string; decimals: number }[] = [
  { symbol: 'USDC', name: 'USD Coin (agent-wallet test)', decimals: 6 },
  { symbol: 'USDT', name: 'Tether USD (agent-wallet test)', decimals: 6 },
  { symbol: 'aUSD', name: 'Agent USD (agent-wallet test)', decimals: 6 },
];

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
export const tokenDeployments: readonly (Create2Deployment & { symbol: TokenSymbol; decimals: number })[] = TEST_TOKENS.map((t) => ({
  ...create2(
    `TestStablecoin ${t.symbol}`,
    DEVNET_SALT,
    encodeDeployData({ abi: stablecoinArtifact.abi as Abi, bytecode: stablecoinArtifact.bytecode as Hex, args: [t.name, t.symbol, t.decimals] }),
  ),
  symbol: t.symbol,
  decimals: t.decimals,
}));
export const counterDeployment = create2('Counter', DEVNET_SALT, counterArtifact.bytecode as Hex);
export const gateDeployment = create2('Gate', DEVNET_SALT, gateArtifact.bytecode as Hex);

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
