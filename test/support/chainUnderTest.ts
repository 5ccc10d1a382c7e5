/**
 * Helpers for the chain worker's tests against the run's devnet (test/globalSetup.ts starts it). Not used by
 * production code.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFunctionData, type Address, type Hex } from 'viem';
import type { Call } from '../../src/api/v1alpha1/index.ts';
import { withBuiltinBundler, type BuiltinBundlerConfig, type ChainConfig } from '../../src/config/chainConfig.ts';
import type { ChainName } from '../../src/config/chains.ts';
import { counterAbi, gateAbi } from '../../src/devnet/contracts.ts';
import { chainConfigsFromManifest, loadManifest, startDevnet } from '../../src/devnet/devnet.ts';
import { MANIFEST_ENV } from '../globalSetup.ts';
import { testDevnet } from './env.ts';
import type { ChainWorker, OperationOutcome } from '../../src/chain/types.ts';

export { counterAbi, gateAbi };

/** The devnet chain these tests use, its config, a funded account's wallet client and the test contracts. */
export function chainUnderTest(name: ChainName = 'arbitrum', overrides: Partial<Omit<BuiltinBundlerConfig, 'kind'>> = {}) {
  const devnet = testDevnet();
  const base = devnet.chainConfigs().find((c) => c.name === name)!;
  const config: ChainConfig = withBuiltinBundler(base, overrides);
  const chain = devnet.chain(name);
  return {
    config,
    client: devnet.publicClient(name),
    funded: devnet.walletClient(name, 0),
    counter: chain.testContracts.counter,
    gate: chain.testContracts.gate,
    manifest: devnet.manifest,
  };
}

/**
 * The chain a benchmark runs on, with its counter contract: the run's devnet when test/globalSetup.ts started
 * one, otherwise a devnet of its own in a temporary directory, which `stop()` shuts down (the run's it leaves).
 */
export async function benchChain(name: ChainName = 'base'): Promise<{ config: ChainConfig; counter: Address; stop(): Promise<void> }> {
  const manifestPath = process.env[MANIFEST_ENV];
  const own = manifestPath ? undefined : await startDevnet({ dataDir: mkdtempSync(join(tmpdir(), 'aw-bench-')), log: () => {} });
  const manifest = own?.manifest ?? loadManifest(manifestPath!);
  return {
    config: chainConfigsFromManifest(manifest).find((c) => c.name === name)!,
    counter: manifest.chains.find((c) => c.name === name)!.testContracts.counter,
    stop: async () => {
      await own?.stop();
    },
  };
}

/** A fresh service secret: every test run gets wallets nobody has used. */
export const freshSecret = (): string => randomBytes(32).toString('hex');
export const uniqueId = (prefix: string): string => `${prefix}-${randomBytes(6).toString('hex')}`;

export const call = (target: Address, data: Hex, value = 0n): Call => ({ target, value: value.toString(), data });
export const incrementCall = (counter: Address): Call => call(counter, encodeFunctionData({ abi: counterAbi, functionName: 'increment' }));
export const failCall = (counter: Address): Call => call(counter, encodeFunctionData({ abi: counterAbi, functionName: 'fail' }));
export const setNumberCall = (counter: Address, n: bigint): Call =>
  call(counter, encodeFunctionData({ abi: counterAbi, functionName: 'setNumber', args: [n] }));
export const setOpenCall = (gate: Address, open: boolean): Call =>
  call(gate, encodeFunctionData({ abi: gateAbi, functionName: 'setOpen', args: [open] }));
export const passCall = (gate: Address): Call => call(gate, encodeFunctionData({ abi: gateAbi, functionName: 'pass' }));

/**
 * Collects the outcomes a worker (local, or remote over gRPC) pushes from the moment it is created, so a test
 * can wait for an outcome that may already have arrived.
 */
export function outcomeRecorder(worker: Pick<ChainWorker, 'onOutcome'>) {
  const seen = new Map<string, OperationOutcome>();
  const waiters = new Map<string, (o: OperationOutcome) => void>();
  const unsubscribe = worker.onOutcome((hash, outcome) => {
    seen.set(hash.toLowerCase(), outcome);
    waiters.get(hash.toLowerCase())?.(outcome);
  });
  return {
    unsubscribe,
    wait(hash: string, timeoutMs = 30_000): Promise<OperationOutcome> {
      const key = hash.toLowerCase();
      const known = seen.get(key);
      if (known) return Promise.resolve(known);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no outcome pushed for ${hash} within ${timeoutMs} ms`)), timeoutMs);
        waiters.set(key, (o) => {
          clearTimeout(timer);
          resolve(o);
        });
      });
    },
  };
}

export type Included = Extract<OperationOutcome, { state: 'included' }>;
export function assertIncluded(o: OperationOutcome): asserts o is Included {
  if (o.state !== 'included') throw new Error(`expected included, got ${JSON.stringify(o)}`);
}
