import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BaseError, ContractFunctionRevertedError, decodeEventLog, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { CHAIN_IDS, CHAIN_NAMES } from '../config/chains.ts';
import { devnetChain, devnetPublicClient, devnetWalletClient } from './clients.ts';
import { CANONICAL, counterAbi, gateAbi, testStablecoinAbi, verifyingPaymasterAbi } from './contracts.ts';
import { FUNDED_TOKEN_AMOUNT, PAYMASTER_DEPOSIT } from './deploy.ts';
import { loadManifest, startDevnet, type Devnet } from './devnet.ts';
import type { DevnetChain, DevnetManifest } from './manifest.ts';
import { referenceWalletAddresses } from './testing/walletAddresses.ts';

const repoRoot = resolve(import.meta.dirname, '../..');

function clientsFor(c: DevnetChain) {
  const chain = devnetChain({ chainId: c.chainId, name: c.name, rpcUrl: c.rpcUrl });
  return { chain, client: devnetPublicClient(chain) };
}

function anvilPids(dataDir: string): number[] {
  return CHAIN_NAMES.map((name) => join(dataDir, 'devnet', `${name}.pid`))
    .filter((p) => existsSync(p))
    .map((p) => Number(readFileSync(p, 'utf8').trim()));
}

/** Running, and not a zombie waiting for a reaper (an exited orphan is gone for our purposes). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function eventually(check: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

/** The manifest minus what legitimately changes between starts. */
function addressesOf(m: DevnetManifest) {
  return { accounts: m.accounts, chains: m.chains.map(({ rpcUrl: _rpcUrl, ...rest }) => rest) };
}

describe('startDevnet', () => {
  let dataDir: string;
  let devnet: Devnet;
  const logs: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'agent-wallet-devnet-'));
    devnet = await startDevnet({ dataDir, log: (line) => logs.push(line) });
  });

  afterAll(async () => {
    await devnet?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('writes a valid manifest for the three chains with their testnet chain ids', () => {
    expect(devnet.manifestPath).toBe(join(dataDir, 'devnet', 'manifest.json'));
    expect(loadManifest(devnet.manifestPath)).toEqual(devnet.manifest);
    expect(devnet.manifest.fresh).toBe(true);
    expect(logs.some((l) => l.includes('devnet is fresh: first start'))).toBe(true);
    expect(devnet.manifest.chains.map((c) => [c.name, c.chainId])).toEqual(CHAIN_NAMES.map((n) => [n, CHAIN_IDS[n]]));
    expect(new Set(devnet.manifest.chains.map((c) => c.rpcUrl)).size).toBe(3);
  });

  test('EntryPoint v0.7 and SimpleAccountFactory sit at their canonical addresses, with code', async () => {
    for (const c of devnet.manifest.chains) {
      const { client } = clientsFor(c);
      expect(c.entryPoint).toBe('0x0000000071727De22E5E9d8BAf0edAc6f37da032');
      expect(c.simpleAccountFactory).toBe('0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985');
      expect(c.accountImplementation).toBe('0x68641DE71cfEa5a5d0D29712449Ee254bb1400C2');
      for (const address of [c.entryPoint, c.simpleAccountFactory, c.accountImplementation, CANONICAL.senderCreator]) {
        expect((await client.getCode({ address }))?.length ?? 0, `${c.name} ${address}`).toBeGreaterThan(2);
      }
      expect(await client.getChainId()).toBe(c.chainId);
    }
  });

  test('factory.getAddress(owner, salt) equals the permissionless SimpleAccount address', async () => {
    const owners = [privateKeyToAccount(devnet.manifest.accounts.funded[0]!.privateKey), privateKeyToAccount(generatePrivateKey())];
    for (const c of devnet.manifest.chains) {
      const { client } = clientsFor(c);
      for (const owner of owners) {
        for (const salt of [0n, 7n, 2n ** 64n]) {
          const { fromFactory, fromPermissionless } = await referenceWalletAddresses({
            client,
            factory: c.simpleAccountFactory,
            entryPoint: c.entryPoint,
            owner,
            salt,
          });
          expect(fromPermissionless).toBe(fromFactory);
        }
      }
    }
  });

  test('the paymaster has its deposit and stake and signs with the manifest paymasterSigner', async () => {
    for (const c of devnet.manifest.chains) {
      const { client } = clientsFor(c);
      const [deposit, signer, owner, info] = await Promise.all([
        client.readContract({ address: c.paymaster, abi: verifyingPaymasterAbi, functionName: 'getDeposit' }),
        client.readContract({ address: c.paymaster, abi: verifyingPaymasterAbi, functionName: 'verifyingSigner' }),
        client.readContract({ address: c.paymaster, abi: verifyingPaymasterAbi, functionName: 'owner' }),
        client.readContract({ address: c.entryPoint, abi: entryPoint07Abi, functionName: 'getDepositInfo', args: [c.paymaster] }),
      ]);
      expect(deposit).toBe(PAYMASTER_DEPOSIT);
      expect(signer).toBe(devnet.manifest.accounts.paymasterSigner.address);
      expect(owner).toBe(devnet.manifest.accounts.deployer.address);
      expect(info.staked).toBe(true);
    }
  });

  test('tokens have 6 decimals, the funded accounts hold them, USDT is accepted only on ethereum', async () => {
    for (const c of devnet.manifest.chains) {
      const { client } = clientsFor(c);
      expect(c.tokens.map((t) => t.symbol)).toEqual(['USDC', 'USDT', 'aUSD']);
      for (const token of c.tokens) {
        expect(token.acceptedForPayment).toBe(token.symbol !== 'USDT' || c.name === 'ethereum');
        expect(token.decimals).toBe(6);
        expect(await client.readContract({ address: token.address, abi: testStablecoinAbi, functionName: 'decimals' })).toBe(6);
        expect(await client.readContract({ address: token.address, abi: testStablecoinAbi, functionName: 'symbol' })).toBe(token.symbol);
        for (const holder of devnet.manifest.accounts.funded) {
          const balance = await client.readContract({ address: token.address, abi: testStablecoinAbi, functionName: 'balanceOf', args: [holder.address] });
          expect(balance).toBe(FUNDED_TOKEN_AMOUNT * 10n ** 6n);
        }
      }
      expect(c.treasury).not.toBe(devnet.manifest.accounts.deployer.address);
    }
    expect(devnet.manifest.accounts.funded).toHaveLength(5);
    expect(devnet.manifest.accounts.executors).toHaveLength(4);
  });

  test('Counter and Gate behave as the tests elsewhere expect', async () => {
    const c = devnet.manifest.chains[0]!;
    const { chain, client } = clientsFor(c);
    const caller = devnet.manifest.accounts.funded[4]!;
    const wallet = devnetWalletClient(chain, caller.privateKey);
    const { counter, gate } = c.testContracts;

    const receipt = await wallet.writeContractSync({ address: counter, abi: counterAbi, functionName: 'incrementBy', args: [5n] });
    const event = decodeEventLog({ abi: counterAbi, ...receipt.logs[0]! });
    expect(event).toMatchObject({ eventName: 'Incremented', args: { caller: caller.address } });
    expect(await client.readContract({ address: counter, abi: counterAbi, functionName: 'lastCaller' })).toBe(caller.address);
    // fail() is pure, so viem reads it (eth_call) rather than simulating a write: the revert reason is the same.
    const failure = await client.readContract({ address: counter, abi: counterAbi, functionName: 'fail' }).catch((e: unknown) => e);
    expect(revertReason(failure)).toBe('Counter: forced failure');

    const closed = await client.simulateContract({ address: gate, abi: gateAbi, functionName: 'pass', account: caller.address }).catch((e: unknown) => e);
    expect(revertReason(closed)).toBe('Gate: closed');
    await wallet.writeContractSync({ address: gate, abi: gateAbi, functionName: 'setOpen', args: [true] });
    await wallet.writeContractSync({ address: gate, abi: gateAbi, functionName: 'pass' });
    expect(await client.readContract({ address: gate, abi: gateAbi, functionName: 'passes' })).toBe(1n);
    await wallet.writeContractSync({ address: gate, abi: gateAbi, functionName: 'setOpen', args: [false] });
  });

  test('anvil answers eth_sendRawTransactionSync with the receipt, and the manifest says so', async () => {
    const c = devnet.manifest.chains[1]!;
    expect(c.syncSend).toBe(true);
    const { chain, client } = clientsFor(c);
    const wallet = devnetWalletClient(chain, devnet.manifest.accounts.funded[3]!.privateKey);
    const request = await wallet.prepareTransactionRequest({ to: devnet.manifest.accounts.funded[2]!.address, value: 1n });
    const signed = await wallet.signTransaction(request);
    const receipt = (await client.request({ method: 'eth_sendRawTransactionSync' as 'eth_sendRawTransaction', params: [signed] })) as unknown as {
      status: Hex;
      blockNumber: Hex;
    };
    expect(receipt.status).toBe('0x1');
    expect(BigInt(receipt.blockNumber)).toBe(await client.getBlockNumber());
  });

  test('chainConfigs() gives each chain worker consistent keys, addresses and tokens', async () => {
    const configs = devnet.chainConfigs();
    expect(configs.map((c) => c.name)).toEqual([...CHAIN_NAMES]);
    for (const [i, config] of configs.entries()) {
      const m = devnet.manifest.chains[i]!;
      expect(config).toMatchObject({ chainId: m.chainId, rpcUrl: m.rpcUrl, entryPoint: m.entryPoint, paymaster: m.paymaster, treasury: m.treasury, tokens: m.tokens });
      expect(config.executorKeys.map((k) => privateKeyToAccount(k).address)).toEqual(devnet.manifest.accounts.executors.map((a) => a.address));
      expect(privateKeyToAccount(config.paymasterSignerKey).address).toBe(devnet.manifest.accounts.paymasterSigner.address);
      expect(config.beneficiary).toBe(devnet.manifest.accounts.executors[0]!.address);
      expect(config.bundler.syncSend).toBe(true);
      const { client } = clientsFor(m);
      for (const key of config.executorKeys) {
        expect(await client.getBalance({ address: privateKeyToAccount(key).address })).toBeGreaterThan(10n ** 21n);
      }
    }
  });

  test('a restart with the same dataDir reloads the chains: same addresses, fresh=false, state kept', async () => {
    const before = devnet.manifest;
    const c = before.chains[0]!;
    const wallet = devnetWalletClient(clientsFor(c).chain, before.accounts.funded[4]!.privateKey);
    await wallet.writeContractSync({ address: c.testContracts.counter, abi: counterAbi, functionName: 'setNumber', args: [4242n] });

    const pids = anvilPids(dataDir);
    expect(pids).toHaveLength(3);
    await devnet.stop();
    expect(pids.filter(isRunning)).toEqual([]);
    expect(anvilPids(dataDir)).toEqual([]);

    logs.length = 0;
    devnet = await startDevnet({ dataDir, log: (line) => logs.push(line) });
    expect(devnet.manifest.fresh).toBe(false);
    expect(logs.some((l) => l.includes('fresh'))).toBe(false);
    expect(addressesOf(devnet.manifest)).toEqual(addressesOf(before));
    const { client } = clientsFor(devnet.manifest.chains[0]!);
    expect(await client.readContract({ address: c.testContracts.counter, abi: counterAbi, functionName: 'number' })).toBe(4242n);
  });

  test('a restart after the chain state was lost redeploys at the same addresses and says so', async () => {
    const before = devnet.manifest;
    await devnet.stop();
    for (const name of CHAIN_NAMES) rmSync(join(dataDir, 'devnet', `${name}.json`));

    logs.length = 0;
    devnet = await startDevnet({ dataDir, log: (line) => logs.push(line) });
    expect(devnet.manifest.fresh).toBe(true);
    expect(logs.some((l) => l.includes('devnet is fresh: chain state was reset'))).toBe(true);
    expect(addressesOf(devnet.manifest)).toEqual(addressesOf(before));
    expect(loadManifest(devnet.manifestPath).fresh).toBe(true);
    const c = devnet.manifest.chains[0]!;
    expect(await clientsFor(c).client.readContract({ address: c.testContracts.counter, abi: counterAbi, functionName: 'number' })).toBe(0n);
  });
});

describe('anvil processes never outlive the devnet', () => {
  const dirs: string[] = [];
  const newDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-wallet-devnet-child-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a devnet in a child process; resolves once it printed "ready". */
  async function startChild(dataDir: string, mode: 'exit' | 'wait') {
    const child = spawn(process.execPath, ['bin/run-ts.js', 'src/devnet/testing/devnetChild.ts', dataDir, mode], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    await new Promise<void>((ready, fail) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('ready')) ready();
      });
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code) => (mode === 'wait' || !output.includes('ready') ? fail(new Error(`child exited ${code}: ${output}`)) : undefined));
    });
    return { child, exited, pids: anvilPids(dataDir) };
  }

  test('when the parent exits without stopping the devnet', async () => {
    const { exited, pids } = await startChild(newDir(), 'exit');
    await exited;
    expect(pids).toHaveLength(3);
    expect(await eventually(() => !pids.some(isRunning))).toBe(true);
  });

  test('when the parent gets SIGTERM', async () => {
    const { child, exited, pids } = await startChild(newDir(), 'wait');
    expect(pids.every(isRunning)).toBe(true);
    child.kill('SIGTERM');
    await exited;
    expect(child.signalCode).toBe('SIGTERM');
    expect(await eventually(() => !pids.some(isRunning))).toBe(true);
  });

  test('when the parent was SIGKILLed, the next start on the same dataDir stops the orphans', async () => {
    const dataDir = newDir();
    const { child, exited, pids } = await startChild(dataDir, 'wait');
    child.kill('SIGKILL');
    await exited;
    expect(pids.every(isRunning)).toBe(true); // nothing could clean up: these are orphans now
    const logs: string[] = [];
    const devnet = await startDevnet({ dataDir, log: (l) => logs.push(l) });
    try {
      expect(pids.some(isRunning)).toBe(false);
      expect(logs.filter((l) => l.includes('stale anvil'))).toHaveLength(3);
      expect(devnet.manifest.fresh).toBe(false);
    } finally {
      await devnet.stop();
    }
  });
});

function revertReason(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
  return reverted instanceof ContractFunctionRevertedError ? reverted.reason : undefined;
}
