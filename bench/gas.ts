/**
 * Gas per operation, warm wallets, by bundle size, with its breakdown: `node bin/run-ts.js bench/gas.ts` (a devnet
 * of its own), or `measureGas` on a running one (bench/run.ts, after its load). Counter.increment from deployed
 * SimpleAccount v0.7 wallets whose EntryPoint nonce is already past 0 (a wallet's first operation deploys it and
 * writes its nonce slot from zero: ≈ +170k, not what a bundle of a busy chain is made of), built and signed by the
 * service's own code (buildSignedOperation, the gas limits of gas.ts) and sent as handleOps bundles of exactly 1,
 * 10, 20 and 32 operations of distinct wallets from one executor key. Option: BENCH_GAS_SIZES (default 1,10,20,32).
 *
 * How the breakdown is taken: debug_traceTransaction with the callTracer gives each call frame's gasUsed. Under
 * the EntryPoint's top frame, per operation: `validateUserOp` on the wallet (account validation),
 * `validatePaymasterUserOp` on the paymaster (paymaster validation), and `innerHandleOp` whose `execute` frame on
 * the wallet is the call (Counter.increment through the wallet). Calldata is the transaction's intrinsic data
 * gas (16 per non-zero byte, 4 per zero byte). The EntryPoint's share is the rest: the transaction's gasUsed − 21000
 * − calldata − those frames (its own bookkeeping: nonce and deposit slots, the cold account accesses of its CALLs
 * (charged to the caller's frame, not the callee's), innerHandleOp's own work, events, the compensation transfer).
 * Each part is fitted over the bundle sizes as `fixed + perOp × n` (the first operation of a bundle pays the cold
 * slots every later one finds warm: the paymaster's deposit, Counter's storage, so that excess is part of a bundle's
 * fixed cost); "fixed share" is the sum of the fixed parts (21000 included) / n.
 *
 * The paymaster variants run side by side in the same run, on the same wallets: the reference (eth-infinitism's
 * VerifyingPaymaster v0.7, what the devnet deploys and the service signs for) and, when given, others.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  toFunctionSelector,
  type Abi,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { SignedUserOperation } from '../src/api/v1alpha1/index.ts';
import { encodeHandleOps } from '../src/chain/bundler/bundleSimulation.ts';
import { outcomesFromLogs } from '../src/chain/bundler/receipt.ts';
import { encodeWalletCallData } from '../src/chain/calls.ts';
import { createChainClient, type ChainClient } from '../src/chain/client.ts';
import { readFees } from '../src/chain/fees.ts';
import { calldataGas, handleOpsGasLimit } from '../src/chain/gas.ts';
import { deriveOwnerAccount } from '../src/chain/ownerKey.ts';
import { DUMMY_SIGNATURE, encodeSponsorshipWindow, signCompactSponsorship } from '../src/chain/paymaster.ts';
import { buildSignedOperation, fromSignedUserOperation, packUserOperation, signAsOwner, sponsoredOperation, type BuildOperationParameters } from '../src/chain/userOperation.ts';
import { builtinBundlerOf, type ChainConfig } from '../src/config/chainConfig.ts';
import { startDevnet } from '../src/devnet/devnet.ts';
import { deployWarmWallets, incrementCallGas, sendAndWait, warmOperationGas } from './ceiling.ts';
import compactArtifact from '../src/devnet/artifacts/CompactVerifyingPaymaster.json' with { type: 'json' };

/** A paymaster the operations are sponsored by: its address and the paymasterData a stub and a signature have. */
export interface PaymasterVariant {
  label: string;
  paymaster: Address;
  /** The sponsorship's encoding (a signed-for paymaster's format); the reference's when absent. */
  format?: 'verifying' | 'compact';
}

export interface GasOptions {
  config: ChainConfig;
  counter: Address;
  /** A funded key to deploy the wallets with (not the executor: its nonce is the bundles'). */
  deployerKey: Hex;
  /**
   * Deploys contracts/CompactVerifyingPaymaster.sol (same signer, its own deposit) and measures it beside the
   * reference, on the same wallets in the same run. Default true.
   */
  compact?: boolean;
  sizes?: readonly number[];
  /** Operations of one wallet in a bundle (consecutive nonces): 1 = every operation from another wallet. Default 1, 2. */
  perWallet?: readonly number[];
}

/** Per operation, for one bundle size: the measured figure and its parts (summing to it). */
export interface GasRow {
  size: number;
  gasPerOp: number;
  account: number;
  paymaster: number;
  call: number;
  entryPoint: number;
  calldata: number;
  /** (21000 + handleOps' fixed part) / size, the fixed part fitted over the sizes. */
  fixedShare: number;
}

export interface GasVariantReport {
  label: string;
  /** Operations per wallet in each bundle. */
  perWallet: number;
  paymaster: Address;
  /** Bytes of paymasterAndData in one operation. */
  paymasterAndDataBytes: number;
  rows: GasRow[];
  /** Fitted over the sizes: gas a bundle costs whatever its size, and what one more operation adds. */
  fixed: number;
  marginal: { account: number; paymaster: number; call: number; entryPoint: number; calldata: number; total: number };
}

const SELECTOR = {
  validateUserOp: toFunctionSelector('validateUserOp((address,uint256,bytes,bytes,bytes32,uint256,bytes32,bytes,bytes),bytes32,uint256)'),
  validatePaymasterUserOp: toFunctionSelector('validatePaymasterUserOp((address,uint256,bytes,bytes,bytes32,uint256,bytes32,bytes,bytes),bytes32,uint256)'),
  innerHandleOp: toFunctionSelector(
    'innerHandleOp(bytes,((address,uint256,uint256,uint256,uint256,uint256,uint256,address,uint256,uint256),bytes32,uint256,uint256,uint256),bytes)',
  ),
  execute: toFunctionSelector('execute(address,uint256,bytes)'),
};

interface CallFrame {
  to?: string;
  input: Hex;
  gasUsed: Hex;
  calls?: CallFrame[];
}

/** One bundle's gas by part (bundle totals, not per operation). */
interface BundleParts {
  total: number;
  account: number;
  paymaster: number;
  call: number;
  calldata: number;
  entryPoint: number;
}

export async function measureGas(opts: GasOptions): Promise<GasVariantReport[]> {
  const { config, counter } = opts;
  const sizes = opts.sizes ?? [1, 10, 20, 32];
  const client = createChainClient(config);
  const syncSend = builtinBundlerOf(config).syncSend;
  const owner = deriveOwnerAccount(randomBytes(32).toString('hex'), 'gas-bench');
  const paymasterSigner = privateKeyToAccount(config.paymasterSignerKey!);
  const executor = privateKeyToAccount(config.executorKeys[0]!);
  const deployer = privateKeyToAccount(opts.deployerKey);
  const fees = await readFees(client);
  const walletCount = Math.max(...sizes);
  const variants: PaymasterVariant[] = [{ label: 'reference (eth-infinitism VerifyingPaymaster v0.7)', paymaster: config.paymaster, format: 'verifying' }];
  if (opts.compact ?? true) {
    variants.push({ label: 'CompactVerifyingPaymaster', paymaster: await deployCompactPaymaster(client, config, deployer, paymasterSigner.address), format: 'compact' });
  }

  // Wallets deployed through the factory directly (anyone may): the operations measured carry no initCode.
  const wallets = await deployWarmWallets(client, config, deployer, owner.address, 'gas', walletCount);
  // The call gas the worker would sign for Counter.increment from a deployed wallet (as bench/ceiling.ts).
  const { sim, calls } = await incrementCallGas(client, config, counter, wallets[0]!);
  const callData = encodeWalletCallData(calls);
  const nonces = wallets.map(() => 0n);
  let txNonce = await client.getTransactionCount({ address: executor.address, blockTag: 'pending' });
  const validUntil = Math.floor(Date.now() / 1000) + 3_600;

  /** A bundle of `count` operations, `perWallet` consecutive nonces of each wallet (the bundler's order). */
  const sendBundle = async (variant: PaymasterVariant, count: number, perWallet = 1): Promise<{ receipt: TransactionReceipt; paymasterAndDataBytes: number; data: Hex }> => {
    const gas = warmOperationGas({
      callGasLimit: sim.value.callGasLimit,
      sender: wallets[0]!,
      callData,
      maxFeePerGas: fees.maxFeePerGas,
      paymaster: variant.paymaster,
      paymasterData: stubPaymasterData(variant.format ?? 'verifying'),
    });

    const slots = Array.from({ length: count }, (_, j) => ({ wallet: Math.floor(j / perWallet), nonce: nonces[Math.floor(j / perWallet)]! + BigInt(j % perWallet) }));
    const signed = await Promise.all(
      slots.map(({ wallet, nonce }) =>
        signOperation(variant, {
          chainId: config.chainId,
          entryPoint: config.entryPoint,
          sender: wallets[wallet]!,
          nonce,
          callData,
          gas,
          maxFeePerGas: fees.maxFeePerGas,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
          sponsorship: { paymaster: variant.paymaster, signer: paymasterSigner, window: { validUntil, validAfter: 0 } },
          owner,
        }),
      ),
    );
    const packed = signed.map((s) => packUserOperation(fromSignedUserOperation(s)));
    const data = encodeHandleOps(packed, config.beneficiary);
    const tx = await executor.signTransaction({
      type: 'eip1559',
      chainId: config.chainId,
      nonce: txNonce++,
      to: config.entryPoint,
      data,
      gas: handleOpsGasLimit(signed.map(() => gas)),
      maxFeePerGas: fees.maxFeePerGas * 4n,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    const receipt = await sendAndWait(client, tx, syncSend);
    const ok = [...outcomesFromLogs(receipt.logs, config.entryPoint).values()].filter((o) => o.success).length;
    if (receipt.status !== 'success' || ok !== count) throw new Error(`${config.name}: ${variant.label}: ${ok} of ${count} operations succeeded (${receipt.transactionHash})`);
    for (const { wallet } of slots) nonces[wallet]!++;
    return { receipt, paymasterAndDataBytes: (packed[0]!.paymasterAndData.length - 2) / 2, data };
  };

  // Warm-up: each wallet's nonce slot leaves zero, Counter's slots are non-zero, each paymaster has been used.
  for (const v of variants) await sendBundle(v, walletCount);

  const reports: GasVariantReport[] = [];
  for (const perWallet of opts.perWallet ?? [1, 2]) {
    for (const variant of variants) {
      const measured: { size: number; parts: BundleParts }[] = [];
      let pmBytes = 0;
      for (const size of sizes.filter((n) => n >= perWallet && n % perWallet === 0)) {
        const { receipt, paymasterAndDataBytes, data } = await sendBundle(variant, size, perWallet);
        pmBytes = paymasterAndDataBytes;
        measured.push({ size, parts: await bundleParts(client, receipt, data, { entryPoint: config.entryPoint, paymaster: variant.paymaster }) });
      }
      reports.push({ ...report(variant, pmBytes, measured), perWallet });
    }
  }
  return reports;
}

/**
 * The service's build and sign code for the reference (buildSignedOperation); for the compact paymaster the same
 * steps with its sponsorship encoding (the same hash, signed by the same key) and the same owner signature.
 */
async function signOperation(variant: PaymasterVariant, p: BuildOperationParameters): Promise<SignedUserOperation> {
  if ((variant.format ?? 'verifying') === 'verifying') return buildSignedOperation(p);
  const op = sponsoredOperation(p);
  op.paymasterData = await signCompactSponsorship({ userOperation: op, chainId: p.chainId, paymaster: p.sponsorship.paymaster, window: p.sponsorship.window, signer: p.sponsorship.signer });
  return signAsOwner(op, { owner: p.owner, entryPoint: p.entryPoint, chainId: p.chainId });
}

/** A CompactVerifyingPaymaster for `signer`, deployed by `deployer` (its owner) with a deposit in the EntryPoint. */
async function deployCompactPaymaster(client: ChainClient, config: ChainConfig, deployer: PrivateKeyAccount, signer: Address): Promise<Address> {
  const fees = await readFees(client);
  const syncSend = builtinBundlerOf(config).syncSend;
  let nonce = await client.getTransactionCount({ address: deployer.address, blockTag: 'pending' });
  const address = getContractAddress({ from: deployer.address, nonce: BigInt(nonce) });
  const common = { type: 'eip1559', chainId: config.chainId, maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas } as const;
  const data = encodeDeployData({ abi: compactArtifact.abi as Abi, bytecode: compactArtifact.bytecode as Hex, args: [config.entryPoint, signer] });
  const deployed = await sendAndWait(client, await deployer.signTransaction({ ...common, nonce: nonce++, data, gas: 2_000_000n }), syncSend);
  if (deployed.status !== 'success') throw new Error(`${config.name}: deploying CompactVerifyingPaymaster failed (${deployed.transactionHash})`);
  const deposit = encodeFunctionData({ abi: compactArtifact.abi as Abi, functionName: 'deposit' });
  const funded = await sendAndWait(client, await deployer.signTransaction({ ...common, nonce: nonce++, to: address, data: deposit, value: 10n ** 18n, gas: 200_000n }), syncSend);
  if (funded.status !== 'success') throw new Error(`${config.name}: the CompactVerifyingPaymaster's deposit failed`);
  return address;
}

/** paymasterData of the final size, for the preVerificationGas estimate. */
function stubPaymasterData(format: 'verifying' | 'compact'): Hex {
  if (format === 'verifying') return `${encodeSponsorshipWindow({ validUntil: 0xffffffffffff, validAfter: 0 })}${DUMMY_SIGNATURE.slice(2)}`;
  return `0x${'ff'.repeat(12)}${DUMMY_SIGNATURE.slice(2, 2 + 128)}`;
}

/** The bundle's gas split by the callTracer's frames (see the header). */
async function bundleParts(client: ChainClient, receipt: TransactionReceipt, data: Hex, at: { entryPoint: Address; paymaster: Address }): Promise<BundleParts> {
  const top = (await client.request({ method: 'debug_traceTransaction', params: [receipt.transactionHash, { tracer: 'callTracer' }] } as never)) as CallFrame;
  const used = (f: CallFrame) => Number(BigInt(f.gasUsed));
  const selector = (f: CallFrame) => f.input.slice(0, 10).toLowerCase();
  let account = 0;
  let paymaster = 0;
  let call = 0;
  for (const f of top.calls ?? []) {
    if (selector(f) === SELECTOR.validateUserOp) account += used(f);
    else if (selector(f) === SELECTOR.validatePaymasterUserOp && f.to?.toLowerCase() === at.paymaster.toLowerCase()) paymaster += used(f);
    else if (selector(f) === SELECTOR.innerHandleOp && f.to?.toLowerCase() === at.entryPoint.toLowerCase()) {
      for (const g of f.calls ?? []) if (selector(g) === SELECTOR.execute) call += used(g);
    }
  }
  const total = Number(receipt.gasUsed);
  const calldata = Number(calldataGas(data));
  return { total, account, paymaster, call, calldata, entryPoint: total - 21_000 - calldata - account - paymaster - call };
}

/** Least-squares line through (size, value): [intercept, slope]. */
function fit(points: readonly [number, number][]): [number, number] {
  const n = points.length;
  if (n === 1) return [0, points[0]![1] / points[0]![0]];
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  const sxy = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const slope = sxy / sxx;
  return [my - slope * mx, slope];
}

function report(variant: PaymasterVariant, paymasterAndDataBytes: number, measured: readonly { size: number; parts: BundleParts }[]): Omit<GasVariantReport, 'perWallet'> {
  const keys = ['account', 'paymaster', 'call', 'entryPoint', 'calldata'] as const;
  const fits = Object.fromEntries(keys.map((k) => [k, fit(measured.map((m) => [m.size, m.parts[k]]))])) as Record<(typeof keys)[number], [number, number]>;
  const fixed = 21_000 + keys.reduce((a, k) => a + fits[k][0], 0);
  const rows = measured.map(({ size, parts }): GasRow => {
    // Each part's per-operation figure is its own bundle total less its fitted fixed part, / size: the row sums
    // exactly to the measured gas per operation.
    const per = (k: (typeof keys)[number]) => (parts[k] - fits[k][0]) / size;
    return {
      size,
      gasPerOp: parts.total / size,
      account: per('account'),
      paymaster: per('paymaster'),
      call: per('call'),
      entryPoint: per('entryPoint'),
      calldata: per('calldata'),
      fixedShare: fixed / size,
    };
  });
  const marginal = { account: fits.account[1], paymaster: fits.paymaster[1], call: fits.call[1], entryPoint: fits.entryPoint[1], calldata: fits.calldata[1], total: 0 };
  marginal.total = marginal.account + marginal.paymaster + marginal.call + marginal.entryPoint + marginal.calldata;
  return { label: variant.label, paymaster: variant.paymaster, paymasterAndDataBytes, rows, fixed, marginal };
}

export function printGas(reports: readonly GasVariantReport[], chain: string): void {
  console.log(`gas per operation, warm wallets, Counter.increment on ${chain} (bench/gas.ts):`);
  const w = (x: number) => x.toFixed(0).padStart(7);
  for (const r of reports) {
    const who = r.perWallet === 1 ? 'each operation from another wallet' : `${r.perWallet} operations per wallet`;
    console.log(`  ${r.label} at ${r.paymaster}, paymasterAndData ${r.paymasterAndDataBytes} bytes; ${who}:`);
    console.log('    bundle  gas/op  account paymaster   call EntryPoint calldata  fixed share');
    for (const row of r.rows) {
      console.log(
        `    ${String(row.size).padStart(6)} ${w(row.gasPerOp)} ${w(row.account)}   ${w(row.paymaster)} ${w(row.call)}    ${w(row.entryPoint)}  ${w(row.calldata)}      ${w(row.fixedShare)}`,
      );
    }
    const m = r.marginal;
    if (r.rows.length < 2) {
      console.log('    (one bundle size: its parts keep their share of the fixed cost; the fixed share is the 21000 alone)');
      continue;
    }
    console.log(
      `    fixed per bundle ${r.fixed.toFixed(0)} (21000 + handleOps' own); each operation adds ${m.total.toFixed(0)}: ` +
        `account ${m.account.toFixed(0)}, paymaster ${m.paymaster.toFixed(0)}, call ${m.call.toFixed(0)}, EntryPoint ${m.entryPoint.toFixed(0)}, calldata ${m.calldata.toFixed(0)}`,
    );
  }
  for (const o of reports) {
    const ref = reports.find((r) => r.perWallet === o.perWallet);
    if (!ref || ref === o) continue;
    const cells = o.rows.map((row, i) => `${row.size}: ${(row.gasPerOp - ref.rows[i]!.gasPerOp).toFixed(0)}`);
    console.log(`  ${o.label} − ${ref.label}, ${o.perWallet} per wallet, gas per operation by bundle size: ${cells.join(', ')}`);
  }
}

// Standalone: a devnet of its own (the ethereum chain: no L1 data fee in the figures).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dataDir = mkdtempSync(join(tmpdir(), 'aw-gas-'));
  const devnet = await startDevnet({ dataDir, log: () => undefined });
  try {
    const config = devnet.chainConfigs().find((c) => c.name === 'ethereum')!;
    const counter = devnet.manifest.chains.find((c) => c.name === 'ethereum')!.testContracts.counter;
    const sizes = process.env.BENCH_GAS_SIZES?.split(',').map(Number);
    const reports = await measureGas({ config, counter, deployerKey: devnet.manifest.accounts.funded[0]!.privateKey, ...(sizes && { sizes }) });
    printGas(reports, config.name);
  } finally {
    await devnet.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
