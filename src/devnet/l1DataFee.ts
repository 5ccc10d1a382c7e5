import { encodeFunctionData, parseAbi, parseGwei, type Address, type Chain, type Hex } from 'viem';
import type { ChainName } from '../config/chains.ts';
import { ARBITRUM_NODE_INTERFACE, OP_STACK_GAS_PRICE_ORACLE, type L1DataFeeConfig } from '../config/chainConfig.ts';
import type { DevnetAccounts } from './accounts.ts';
import { devnetPublicClient, devnetWalletClient } from './clients.ts';
import oracleArtifact from './artifacts/DevnetGasPriceOracle.json' with { type: 'json' };
import nodeInterfaceArtifact from './artifacts/DevnetNodeInterface.json' with { type: 'json' };

/** What each devnet chain stands for: base an OP-stack L2, arbitrum a Nitro one, ethereum an L1. */
export const DEVNET_L1_DATA_FEE: Readonly<Record<ChainName, L1DataFeeConfig>> = {
  ethereum: { kind: 'none' },
  base: { kind: 'opStack', gasPriceOracle: OP_STACK_GAS_PRICE_ORACLE, method: 'getL1Fee' },
  arbitrum: { kind: 'arbitrum', nodeInterface: ARBITRUM_NODE_INTERFACE },
};

/**
 * The stand-ins' parameters at devnet start. The devnet's L2 gas price is about 1 gwei (anvil's tip), a thousand
 * times a real L2's, so the L1 prices are set high enough for the L1 part to show (a few thousand gas per
 * operation) rather than to be realistic. Base's scalars are Base mainnet's (Ecotone). The owner (the installer
 * account) may change them: `setParameters`.
 */
export const DEVNET_L1_FEE_PARAMETERS = {
  opStack: { l1BaseFee: parseGwei('100'), blobBaseFee: parseGwei('1'), baseFeeScalar: 2_269, blobBaseFeeScalar: 1_055_762 },
  arbitrum: { pricePerUnit: parseGwei('0.1'), minBaseFee: parseGwei('1') },
} as const;

export const devnetGasPriceOracleAbi = parseAbi([
  'function owner() view returns (address)',
  'function initialize(address owner_, uint256 l1BaseFee_, uint256 blobBaseFee_, uint32 baseFeeScalar_, uint32 blobBaseFeeScalar_)',
  'function setParameters(uint256 l1BaseFee_, uint256 blobBaseFee_, uint32 baseFeeScalar_, uint32 blobBaseFeeScalar_)',
  'function l1BaseFee() view returns (uint256)',
  'function blobBaseFee() view returns (uint256)',
  'function baseFeeScalar() view returns (uint32)',
  'function blobBaseFeeScalar() view returns (uint32)',
  'function getL1Fee(bytes data) view returns (uint256)',
  'function getL1GasUsed(bytes data) view returns (uint256)',
  'function getL1FeeUpperBound(uint256 unsignedTxSize) view returns (uint256)',
]);
export const devnetNodeInterfaceAbi = parseAbi([
  'function owner() view returns (address)',
  'function initialize(address owner_, uint256 pricePerUnit_, uint256 minBaseFee_)',
  'function setParameters(uint256 pricePerUnit_, uint256 minBaseFee_)',
  'function pricePerUnit() view returns (uint256)',
  'function minBaseFee() view returns (uint256)',
  'function gasEstimateL1Component(address to, bool contractCreation, bytes data) view returns (uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFeeEstimate)',
]);

/**
 * Puts the chain's L1 fee stand-in (contracts/DevnetGasPriceOracle.sol, DevnetNodeInterface.sol) at the address
 * the real one has, with anvil_setCode, and initializes its parameters (owner: the installer): doing only what is
 * missing, as the rest of the deployment. anvil_setCode leaves storage empty, so `owner() == 0` means "not set
 * up yet". Both land in the chain state, hence in its snapshots: a restart finds them there. Returns a label when
 * something was done.
 */
export async function installL1FeeStandIn(chain: Chain, accounts: DevnetAccounts, fee: L1DataFeeConfig): Promise<string | undefined> {
  if (fee.kind === 'none') return undefined;
  const client = devnetPublicClient(chain);
  const installer = devnetWalletClient(chain, accounts.installer.privateKey);
  const [address, artifact, abi, label]: [Address, { deployedBytecode: string }, typeof devnetGasPriceOracleAbi | typeof devnetNodeInterfaceAbi, string] =
    fee.kind === 'opStack'
      ? [fee.gasPriceOracle, oracleArtifact, devnetGasPriceOracleAbi, 'GasPriceOracle stand-in']
      : [fee.nodeInterface, nodeInterfaceArtifact, devnetNodeInterfaceAbi, 'NodeInterface stand-in'];
  const code = (await client.getCode({ address })) ?? '0x';
  if (code.toLowerCase() !== artifact.deployedBytecode.toLowerCase()) {
    await client.request({ method: 'anvil_setCode', params: [address, artifact.deployedBytecode as Hex] } as never);
  }
  const owner = await client.readContract({ address, abi, functionName: 'owner' });
  if (owner !== '0x0000000000000000000000000000000000000000') return undefined;
  const p = DEVNET_L1_FEE_PARAMETERS;
  const data =
    fee.kind === 'opStack'
      ? encodeFunctionData({
          abi: devnetGasPriceOracleAbi,
          functionName: 'initialize',
          args: [accounts.installer.address, p.opStack.l1BaseFee, p.opStack.blobBaseFee, p.opStack.baseFeeScalar, p.opStack.blobBaseFeeScalar],
        })
      : encodeFunctionData({
          abi: devnetNodeInterfaceAbi,
          functionName: 'initialize',
          args: [accounts.installer.address, p.arbitrum.pricePerUnit, p.arbitrum.minBaseFee],
        });
  await installer.sendTransactionSync({ to: address, data });
  return label;
}
