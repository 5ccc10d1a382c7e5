import { describe, expect, it } from 'vitest';
import { hexToBytes, size, type Abi, type Address, type Hex } from 'viem';
import type { ChainName } from '../config/chains.ts';
import { ARBITRUM_NODE_INTERFACE, OP_STACK_GAS_PRICE_ORACLE, type ChainConfig } from '../config/chainConfig.ts';
import { handleOpsTransactionFor, unsignedHandleOpsTransactionFor } from '../chain/l1DataFee.ts';
import { createOperationEstimates, l2GasLimits } from '../chain/worker/estimates.ts';
import { toWalletCalls } from '../chain/calls.ts';
import { createWalletResolver } from '../chain/wallet.ts';
import type { FeeSnapshot } from '../chain/fees.ts';
import { chainUnderTest, freshSecret, incrementCall } from '../../test/support/chainUnderTest.ts';
import { testDevnet } from '../../test/support/env.ts';
import { devnetAccounts } from './accounts.ts';
import { DEVNET_L1_FEE_PARAMETERS, devnetGasPriceOracleAbi, devnetNodeInterfaceAbi } from './l1DataFee.ts';
import oracleArtifact from './artifacts/DevnetGasPriceOracle.json' with { type: 'json' };
import nodeInterfaceArtifact from './artifacts/DevnetNodeInterface.json' with { type: 'json' };

const gwei = 10n ** 9n;
const installer = devnetAccounts().installer.address;
const OP = DEVNET_L1_FEE_PARAMETERS.opStack;
const ARB = DEVNET_L1_FEE_PARAMETERS.arbitrum;

/** Ecotone's L1 gas of a transaction, counted by hand: 4 per zero byte, 16 per other, plus 68 × 16 for a signature. */
function ecotoneL1Gas(tx: Hex): bigint {
  const bytes = hexToBytes(tx);
  const zeros = BigInt(bytes.filter((b) => b === 0).length);
  return zeros * 4n + (BigInt(bytes.length) - zeros) * 16n + 68n * 16n;
}
/** 16 × base-fee scalar × L1 base fee + blob scalar × blob base fee, at the devnet's parameters. */
const opScaledFee = 16n * BigInt(OP.baseFeeScalar) * OP.l1BaseFee + BigInt(OP.blobBaseFeeScalar) * OP.blobBaseFee;

describe('L1 fee stand-ins on the devnet', () => {
  const devnet = testDevnet();

  it('sit at the predeploy addresses of base and arbitrum, owned by the installer, with the devnet parameters; ethereum has none', async () => {
    const base = devnet.publicClient('base');
    const arb = devnet.publicClient('arbitrum');
    const eth = devnet.publicClient('ethereum');
    expect(await base.getCode({ address: OP_STACK_GAS_PRICE_ORACLE })).toBe(oracleArtifact.deployedBytecode);
    expect(await arb.getCode({ address: ARBITRUM_NODE_INTERFACE })).toBe(nodeInterfaceArtifact.deployedBytecode);
    expect(await eth.getCode({ address: OP_STACK_GAS_PRICE_ORACLE })).toBeUndefined();
    expect(await eth.getCode({ address: ARBITRUM_NODE_INTERFACE })).toBeUndefined();
    const oracle = { address: OP_STACK_GAS_PRICE_ORACLE, abi: devnetGasPriceOracleAbi } as const;
    expect(await base.readContract({ ...oracle, functionName: 'owner' })).toBe(installer);
    expect(await base.readContract({ ...oracle, functionName: 'l1BaseFee' })).toBe(OP.l1BaseFee);
    expect(await base.readContract({ ...oracle, functionName: 'blobBaseFee' })).toBe(OP.blobBaseFee);
    expect(await base.readContract({ ...oracle, functionName: 'baseFeeScalar' })).toBe(OP.baseFeeScalar);
    expect(await base.readContract({ ...oracle, functionName: 'blobBaseFeeScalar' })).toBe(OP.blobBaseFeeScalar);
    const ni = { address: ARBITRUM_NODE_INTERFACE, abi: devnetNodeInterfaceAbi } as const;
    expect(await arb.readContract({ ...ni, functionName: 'owner' })).toBe(installer);
    expect(await arb.readContract({ ...ni, functionName: 'pricePerUnit' })).toBe(ARB.pricePerUnit);
    expect(await arb.readContract({ ...ni, functionName: 'minBaseFee' })).toBe(ARB.minBaseFee);
  });

  /** A copy of a stand-in of our own (the devnet's are shared by the run's tests: their parameters stay as set). */
  async function ownCopy(name: ChainName, artifact: { abi: unknown; bytecode: string }): Promise<Address> {
    const wallet = devnet.walletClient(name, 0);
    const hash = await wallet.deployContract({ abi: artifact.abi as Abi, bytecode: artifact.bytecode as Hex });
    const receipt = await devnet.publicClient(name).waitForTransactionReceipt({ hash });
    return receipt.contractAddress!;
  }

  it('GasPriceOracle: Ecotone getL1Fee and Fjord getL1FeeUpperBound match hand-computed vectors; only the owner sets parameters', async () => {
    const client = devnet.publicClient('base');
    const wallet = devnet.walletClient('base', 0);
    const address = await ownCopy('base', oracleArtifact);
    const oracle = { address, abi: devnetGasPriceOracleAbi } as const;
    await client.waitForTransactionReceipt({
      hash: await wallet.writeContract({ ...oracle, functionName: 'initialize', args: [wallet.account.address, 100n * gwei, gwei, 2_269, 1_055_762] }),
    });
    // 0x00ff00ff01: 2 zero bytes, 3 others → 2×4 + 3×16 + 68×16 = 8 + 48 + 1088 = 1144 L1 gas
    expect(await client.readContract({ ...oracle, functionName: 'getL1GasUsed', args: ['0x00ff00ff01'] })).toBe(1144n);
    // scaled = 16 × 2269 × 100e9 + 1055762 × 1e9 = 3.6304e15 + 1.055762e15 = 4.686162e15
    // fee = 1144 × 4.686162e15 / (16 × 1e6) = 335,060,583,000 wei
    expect(await client.readContract({ ...oracle, functionName: 'getL1Fee', args: ['0x00ff00ff01'] })).toBe(335_060_583_000n);
    // Fjord: size 1000 + 68 = 1068; FastLZ bound 1068 + 1068/255 (4) + 16 = 1088;
    // estimated size = -42,585,600 + 836,500 × 1088 = 867,526,400; fee = 867,526,400 × 4.686162e15 / 1e12 = 4,065,369,249,676
    expect(await client.readContract({ ...oracle, functionName: 'getL1FeeUpperBound', args: [1000n] })).toBe(4_065_369_249_676n);
    // Tiny transactions are priced at Fjord's 100-byte minimum: 100e6 × 4.686162e15 / 1e12 = 468,616,200,000
    expect(await client.readContract({ ...oracle, functionName: 'getL1FeeUpperBound', args: [0n] })).toBe(468_616_200_000n);

    const other = devnet.walletClient('base', 1);
    await expect(other.writeContract({ ...oracle, functionName: 'setParameters', args: [1n, 1n, 1, 1] })).rejects.toThrow(/NotOwner|revert/);
    await expect(other.writeContract({ ...oracle, functionName: 'initialize', args: [other.account.address, 1n, 1n, 1, 1] })).rejects.toThrow(/AlreadyInitialized|revert/);
    await client.waitForTransactionReceipt({ hash: await wallet.writeContract({ ...oracle, functionName: 'setParameters', args: [gwei, 0n, 1_000_000, 0] }) });
    // 1144 × (16 × 1e6 × 1e9) / 16e6 = 1144 × 1e9
    expect(await client.readContract({ ...oracle, functionName: 'getL1Fee', args: ['0x00ff00ff01'] })).toBe(1144n * gwei);
  });

  it('NodeInterface: gasEstimateL1Component as Nitro computes it, over the data uncompressed; only the owner sets parameters', async () => {
    const client = devnet.publicClient('arbitrum');
    const wallet = devnet.walletClient('arbitrum', 0);
    const address = await ownCopy('arbitrum', nodeInterfaceArtifact);
    const ni = { address, abi: devnetNodeInterfaceAbi } as const;
    // A floor of 10 gwei, above the devnet's base fee (anvil starts at 1 gwei and falls while blocks are light).
    await client.waitForTransactionReceipt({ hash: await wallet.writeContract({ ...ni, functionName: 'initialize', args: [wallet.account.address, gwei, 10n * gwei] }) });
    // units = 16 × (5 bytes + 140) = 2320; fee = 1e9 × 2320 × 1.1 = 2.552e12 wei; gas = 2.552e12 / 10 gwei = 255
    const [gas, baseFee, l1BaseFeeEstimate] = await client.readContract({ ...ni, functionName: 'gasEstimateL1Component', args: [address, false, '0x00ff00ff01'] });
    expect(baseFee).toBe(10n * gwei);
    expect(l1BaseFeeEstimate).toBe(gwei);
    expect(gas).toBe(255n);
    await expect(devnet.walletClient('arbitrum', 1).writeContract({ ...ni, functionName: 'setParameters', args: [1n, 1n] })).rejects.toThrow(/NotOwner|revert/);
    await client.waitForTransactionReceipt({ hash: await wallet.writeContract({ ...ni, functionName: 'setParameters', args: [2n * gwei, 10n * gwei] }) });
    const [doubled] = await client.readContract({ ...ni, functionName: 'gasEstimateL1Component', args: [address, false, '0x00ff00ff01'] });
    expect(doubled).toBe(510n);
  });
});

describe("an operation's preVerificationGas on the devnet", () => {
  // Fees an operation is signed with: price = min(3 gwei, 1 gwei base + 1 gwei tip) = 2 gwei.
  const fees: FeeSnapshot = { maxFeePerGas: 3n * gwei, maxPriorityFeePerGas: gwei, baseFeePerGas: gwei, blockNumber: 0n, blockTimestamp: 0n, blockGasLimit: 30_000_000n };

  async function limitsOn(name: ChainName, l1DataFee?: ChainConfig['l1DataFee']) {
    const under = chainUnderTest(name);
    const env = { ...under, config: { ...under.config, ...(l1DataFee && { l1DataFee }) } };
    const wallets = createWalletResolver(env.client, env.config, freshSecret());
    const estimates = createOperationEstimates({ client: env.client, config: env.config, wallets, fees: async () => fees, reuseMs: 5_000 });
    const wallet = await wallets.resolve({ apiClient: 'l1fee', agentId: 'agent' });
    const sim = await estimates.forSigning(wallet, toWalletCalls([incrementCall(env.counter)]));
    if (!sim.ok) throw new Error(sim.error.message);
    const p = { wallet, sim: sim.value, deploying: true, nonce: 0n, fees };
    const gas = await estimates.gasLimits(p);
    const l2 = l2GasLimits(env.config, p);
    const tx = handleOpsTransactionFor({ chainId: env.config.chainId, entryPoint: env.config.entryPoint, beneficiary: env.config.beneficiary, packed: l2.packed });
    const simulated = await estimates.simulate({ apiClient: 'l1fee', agentId: 'agent' }, [incrementCall(env.counter)]);
    if (!simulated.ok) throw new Error(simulated.error.message);
    const unsigned = unsignedHandleOpsTransactionFor({ chainId: env.config.chainId, entryPoint: env.config.entryPoint, beneficiary: env.config.beneficiary, packed: l2.packed });
    return { env, gas, l2: l2.gas, tx, unsigned, simulated: simulated.value };
  }

  it('base: the L2 part plus the GasPriceOracle fee of its handleOps transaction at the operation price, and simulate shows it', async () => {
    const { env, gas, l2, tx, simulated } = await limitsOn('base');
    // fee = Ecotone L1 gas × scaled fee / 16e6, as gas at 2 gwei, rounded up
    const fee = (ecotoneL1Gas(tx) * opScaledFee) / 16_000_000n;
    expect(await env.client.readContract({ address: OP_STACK_GAS_PRICE_ORACLE, abi: devnetGasPriceOracleAbi, functionName: 'getL1Fee', args: [tx] })).toBe(fee);
    const l1Gas = (fee + 2n * gwei - 1n) / (2n * gwei);
    expect(gas.l1DataGas).toBe(l1Gas);
    expect(gas.preVerificationGas).toBe(l2.preVerificationGas + l1Gas);
    // The devnet's parameters make it a few thousand gas for a first operation (≈ 1.2 kB of transaction).
    expect(l1Gas).toBeGreaterThan(1_000n);
    console.log(`base: tx ${size(tx)} bytes, L1 fee ${fee} wei = ${l1Gas} gas at 2 gwei; PVG ${l2.preVerificationGas} + ${l1Gas}`);
    // simulate: the same L1 part (same packing, same fees), its cost at maxFeePerGas inside estimatedCostWei
    expect(simulated.l1Data).toEqual({ gas: l1Gas, costWei: l1Gas * fees.maxFeePerGas });
    expect(simulated.estimatedCostWei).toBe(simulated.estimatedGas * fees.maxFeePerGas);
    expect(simulated.estimatedGas).toBeGreaterThan(l1Gas + l2.preVerificationGas);
  });

  it("base with Fjord's getL1FeeUpperBound: the bound of the unsigned transaction's size, as gas at the operation price", async () => {
    const { gas, l2, unsigned } = await limitsOn('base', { kind: 'opStack', gasPriceOracle: OP_STACK_GAS_PRICE_ORACLE, method: 'getL1FeeUpperBound' });
    // size + 68 (signature); FastLZ bound = n + n/255 + 16; estimated = -42,585,600 + 836,500 × bound; fee = estimated × scaled / 1e12
    const n = BigInt(size(unsigned)) + 68n;
    const bound = n + n / 255n + 16n;
    const estimated = -42_585_600n + 836_500n * bound;
    const fee = (estimated * opScaledFee) / 10n ** 12n;
    const l1Gas = (fee + 2n * gwei - 1n) / (2n * gwei);
    expect(gas.l1DataGas).toBe(l1Gas);
    expect(gas.preVerificationGas).toBe(l2.preVerificationGas + l1Gas);
    console.log(`base (upper bound): unsigned tx ${size(unsigned)} bytes, L1 fee ${fee} wei = ${l1Gas} gas at 2 gwei`);
  });

  it('arbitrum: the L2 part plus the NodeInterface gas of its handleOps transaction', async () => {
    const { env, gas, l2, tx, simulated } = await limitsOn('arbitrum');
    const [, baseFee] = await env.client.readContract({ address: ARBITRUM_NODE_INTERFACE, abi: devnetNodeInterfaceAbi, functionName: 'gasEstimateL1Component', args: [env.config.entryPoint, false, tx] });
    // The devnet's base fee is below the stand-in's 1 gwei floor (anvil starts at 1 gwei; light blocks lower it).
    expect(baseFee).toBe(ARB.minBaseFee);
    // units = 16 × (bytes + 140); fee = 0.1 gwei × units × 1.1; gas = fee / 1 gwei
    const units = 16n * (BigInt(size(tx)) + 140n);
    const l1Gas = (ARB.pricePerUnit * units * 11_000n) / 10_000n / ARB.minBaseFee;
    expect(gas.l1DataGas).toBe(l1Gas);
    expect(gas.preVerificationGas).toBe(l2.preVerificationGas + l1Gas);
    expect(l1Gas).toBeGreaterThan(1_000n);
    console.log(`arbitrum: tx ${size(tx)} bytes, ${units} L1 units = ${l1Gas} gas; PVG ${l2.preVerificationGas} + ${l1Gas}`);
    expect(simulated.l1Data?.gas).toBe(l1Gas);
  });

  it('ethereum: no L1 part', async () => {
    const { gas, l2, simulated } = await limitsOn('ethereum');
    expect(gas.l1DataGas).toBeUndefined();
    expect(gas).toEqual(l2);
    expect(simulated.l1Data).toBeUndefined();
  });
});
