/**
 * The floors the service's figures are printed beside, measured in the same run on the same machine (figures vary
 * up to 4× between machines of one kind; a ratio to these travels):
 * - signing: the CPU of building and signing one sponsored operation (the sponsorship's signature and the owner's,
 *   the hashes under them), the service's own code (buildSignedOperation) with no RPC;
 * - a plain transfer: a native-coin transfer as a wallet sends it (viem: nonce, fees and gas read, signed,
 *   eth_sendRawTransactionSync), sent → mined;
 * - one simulation: one eth_call to the chain (the Counter's view), as admission's simulation makes;
 * - one durable write: a small append and its fdatasync in a file of the temp dir, as the embedded store's log does.
 */
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFunctionData, parseEther, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildSignedOperation } from '../src/chain/userOperation.ts';
import { devnetChain, devnetPublicClient, devnetWalletClient } from '../src/devnet/clients.ts';
import { counterAbi } from '../src/devnet/contracts.ts';
import type { DevnetChain } from '../src/devnet/manifest.ts';
import { fmt, pct } from './load.ts';

/** CPU ms per built and signed sponsored operation (median of 5 rounds of `n`). */
export async function signingFloorMs(n = 200): Promise<number> {
  const owner = privateKeyToAccount(generatePrivateKey());
  const signer = privateKeyToAccount(generatePrivateKey());
  const callData = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
  const gas = { callGasLimit: 60_000n, verificationGasLimit: 70_000n, preVerificationGas: 50_000n, paymasterVerificationGasLimit: 45_000n, paymasterPostOpGasLimit: 0n };
  const rounds: number[] = [];
  for (let round = 0; round < 6; round++) {
    const before = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      await buildSignedOperation({
        chainId: 31337,
        entryPoint: '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
        sender: owner.address,
        nonce: BigInt(i),
        callData,
        gas,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1_000_000n,
        sponsorship: { paymaster: signer.address, signer, window: { validUntil: 2_000_000_000 + i, validAfter: 0 } },
        owner,
      });
    }
    const used = process.cpuUsage(before);
    if (round > 0) rounds.push((used.user + used.system) / 1000 / n); // the first warms the JIT
  }
  return pct(rounds, 50);
}

export interface ChainFloors {
  transfer: number[];
  call: number[];
  fdatasync: number[];
}

export async function measureChainFloors(chain: DevnetChain, payerKey: Hex, n = 50): Promise<ChainFloors> {
  const c = devnetChain(chain);
  const wallet = devnetWalletClient(c, payerKey);
  const client = devnetPublicClient(c);
  const to = privateKeyToAccount(generatePrivateKey()).address as Address;
  const out: ChainFloors = { transfer: [], call: [], fdatasync: [] };
  for (let i = 0; i <= n; i++) {
    const t0 = performance.now();
    await wallet.sendTransactionSync({ to, value: parseEther('0.0001') });
    if (i > 0) out.transfer.push(performance.now() - t0);
    const t1 = performance.now();
    await client.call({ to: chain.testContracts.counter as Address, data: encodeFunctionData({ abi: counterAbi, functionName: 'number' }) });
    if (i > 0) out.call.push(performance.now() - t1);
  }
  const dir = mkdtempSync(join(tmpdir(), 'aw-floor-'));
  const fd = openSync(join(dir, 'log'), 'a');
  const record = Buffer.alloc(400, 1);
  for (let i = 0; i <= n; i++) {
    const t0 = performance.now();
    writeSync(fd, record);
    fdatasyncSync(fd);
    if (i > 0) out.fdatasync.push(performance.now() - t0);
  }
  closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
  return out;
}

export const floorLine = (name: string, xs: number[]) => `  reference, same run: ${name}: p50 ${fmt(pct(xs, 50))}, p99 ${fmt(pct(xs, 99))}`;
