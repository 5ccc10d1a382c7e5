import { createServer } from 'node:net';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { BaseError, ContractFunctionRevertedError, decodeEventLog, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { CHAIN_IDS, CHAIN_NAMES } from '../config/chains.ts';
import { devnetChain, devnetPublicClient, devnetWalletClient } from './clients.ts';
import { CANONICAL, counterAbi, gateAbi, TEST_TOKENS, testStablecoinAbi, verifyingPaymasterAbi } from './contracts.ts';
import { PAYMASTER_DEPOSIT } from './deploy.ts';
import { devnetAccounts } from './accounts.ts';
import { DEVNET_L1_FEE_PARAMETERS, devnetGasPriceOracleAbi, devnetNodeInterfaceAbi } from './l1DataFee.ts';
import { ARBITRUM_NODE_INTERFACE, OP_STACK_GAS_PRICE_ORACLE } from '../config/chainConfig.ts';
import { startAnvil, type AnvilInstance } from './anvil.ts';
import { DevnetError, loadManifest, startDevnet, type Devnet } from './devnet.ts';
import type { DevnetChain, DevnetManifest } from './manifest.ts';
import { journalDir } from './journal.ts';
import { chainStateFiles, snapshotHeight } from './stateFile.ts';
import { spawnDevnetChild } from './testing/devnetProcess.ts';
import { devnetAnvilPids, isRunning } from './testing/processes.ts';
import { referenceWalletAddresses } from './testing/walletAddresses.ts';
import { builtinBundlerOf } from '../config/chainConfig.ts';

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

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

/** Starts a devnet in a child process; resolves once it printed "ready", with the anvils it started. */
async function startChild(dataDir: string, mode: 'exit' | 'wait', opts: { detached?: boolean } = {}) {
  const { child, exited } = await spawnDevnetChild(dataDir, mode, opts);
  return { child, exited, pids: anvilPids(dataDir) };
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

  test('stablecoins have 6 decimals and WETH 18, the funded accounts hold them, USDT is accepted only on ethereum, WETH nowhere', async () => {
    for (const c of devnet.manifest.chains) {
      const { client } = clientsFor(c);
      expect(c.tokens.map((t) => t.symbol)).toEqual(['USDC', 'USDT', 'aUSD', 'WETH']);
      for (const token of c.tokens) {
        const spec = TEST_TOKENS.find((t) => t.symbol === token.symbol)!;
        expect(token.acceptedForPayment).toBe(token.symbol !== 'WETH' && (token.symbol !== 'USDT' || c.name === 'ethereum'));
        expect(token.decimals).toBe(token.symbol === 'WETH' ? 18 : 6);
        expect(await client.readContract({ address: token.address, abi: testStablecoinAbi, functionName: 'decimals' })).toBe(token.decimals);
        expect(await client.readContract({ address: token.address, abi: testStablecoinAbi, functionName: 'symbol' })).toBe(token.symbol);
        for (const holder of devnet.manifest.accounts.funded) {
          const balance = await client.readContract({ address: token.address, abi: testStablecoinAbi, functionName: 'balanceOf', args: [holder.address] });
          expect(balance).toBe(spec.funded * 10n ** BigInt(token.decimals));
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
      expect(privateKeyToAccount(config.paymasterSignerKey!).address).toBe(devnet.manifest.accounts.paymasterSigner.address);
      expect(config.beneficiary).toBe(devnet.manifest.accounts.executors[0]!.address);
      expect(builtinBundlerOf(config).syncSend).toBe(true);
      const { client } = clientsFor(m);
      for (const key of config.executorKeys) {
        expect(await client.getBalance({ address: privateKeyToAccount(key).address })).toBeGreaterThan(10n ** 21n);
      }
    }
  });

  test('an idle chain is never rewritten; a new block is saved soon after, on that chain only', async () => {
    const files = CHAIN_NAMES.map((name) => chainStateFiles(join(dataDir, 'devnet'), name));
    const identity = () => files.map((f) => ({ ino: statSync(f.current).ino, mtimeMs: statSync(f.current).mtimeMs }));
    await devnet.flushSnapshots(); // the earlier tests' blocks
    const before = devnet.snapshotStats();
    const filesBefore = identity();
    // Counted head checks, not elapsed time: ten rounds in which every chain looked and found nothing new.
    for (let i = 0; i < 10; i++) await devnet.nextSnapshotPolls();
    const idle = devnet.snapshotStats();
    for (const name of CHAIN_NAMES) {
      expect(idle[name].polls, name).toBeGreaterThanOrEqual(before[name].polls + 10);
      expect(idle[name].writes, name).toBe(before[name].writes);
    }
    expect(identity()).toEqual(filesBefore);

    const c = devnet.manifest.chains.find((chain) => chain.name === 'base')!;
    const wallet = devnetWalletClient(clientsFor(c).chain, devnet.manifest.accounts.funded[4]!.privateKey);
    const receipt = await wallet.writeContractSync({ address: c.testContracts.counter, abi: counterAbi, functionName: 'incrementBy', args: [1n] });
    expect(await eventually(() => (devnet.snapshotStats().base.savedHead?.number ?? 0) >= Number(receipt.blockNumber))).toBe(true);
    expect(await snapshotHeight(files[CHAIN_NAMES.indexOf('base')]!.current)).toBeGreaterThanOrEqual(Number(receipt.blockNumber));
    const after = devnet.snapshotStats();
    expect(after.base.writes).toBeGreaterThan(idle.base.writes);
    expect(after.ethereum.writes).toBe(idle.ethereum.writes);
    expect(after.arbitrum.writes).toBe(idle.arbitrum.writes);
  });

  test('a revert followed by as many new blocks (same height, another head) is saved too', async () => {
    const c = devnet.manifest.chains.find((chain) => chain.name === 'arbitrum')!;
    const { chain, client } = clientsFor(c);
    const wallet = devnetWalletClient(chain, devnet.manifest.accounts.funded[4]!.privateKey);
    const incrementBy = (n: bigint) => wallet.writeContractSync({ address: c.testContracts.counter, abi: counterAbi, functionName: 'incrementBy', args: [n] });
    const id = await client.request({ method: 'evm_snapshot' as 'eth_chainId' });
    const first = await incrementBy(1n);
    expect(await eventually(() => devnet.snapshotStats().arbitrum.savedHead?.hash === first.blockHash)).toBe(true);
    await client.request({ method: 'evm_revert' as 'eth_chainId', params: [id] as never });
    const second = await incrementBy(2n);
    expect(second.blockNumber).toBe(first.blockNumber);
    expect(second.blockHash).not.toBe(first.blockHash);
    expect(await eventually(() => devnet.snapshotStats().arbitrum.savedHead?.hash === second.blockHash)).toBe(true);
  });

  test('a restart with the same dataDir reloads the chains: same addresses, fresh=false, state kept', async () => {
    const before = devnet.manifest;
    const c = before.chains[0]!;
    const wallet = devnetWalletClient(clientsFor(c).chain, before.accounts.funded[4]!.privateKey);
    await wallet.writeContractSync({ address: c.testContracts.counter, abi: counterAbi, functionName: 'setNumber', args: [4242n] });
    // The L1 fee stand-in's owner changes its parameters through the journaled RPC: the restart keeps them.
    const baseChain = before.chains.find((x) => x.name === 'base')!;
    const installer = devnetWalletClient(clientsFor(baseChain).chain, devnetAccounts().installer.privateKey);
    await installer.writeContractSync({ address: OP_STACK_GAS_PRICE_ORACLE, abi: devnetGasPriceOracleAbi, functionName: 'setParameters', args: [7n, 8n, 9, 10] });

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
    // The RPC URLs too: a wallet or script configured with them keeps working across restarts.
    expect(devnet.manifest.chains.map((x) => x.rpcUrl)).toEqual(before.chains.map((x) => x.rpcUrl));
    const { client } = clientsFor(devnet.manifest.chains[0]!);
    expect(await client.readContract({ address: c.testContracts.counter, abi: counterAbi, functionName: 'number' })).toBe(4242n);
    const base = clientsFor(devnet.manifest.chains.find((x) => x.name === 'base')!).client;
    expect(await base.readContract({ address: OP_STACK_GAS_PRICE_ORACLE, abi: devnetGasPriceOracleAbi, functionName: 'l1BaseFee' })).toBe(7n);
    expect(await base.readContract({ address: OP_STACK_GAS_PRICE_ORACLE, abi: devnetGasPriceOracleAbi, functionName: 'blobBaseFeeScalar' })).toBe(10);
  });

  test('a restart after the chain state was lost redeploys at the same addresses and says so', async () => {
    const before = devnet.manifest;
    await devnet.stop();
    // Meanwhile another program took base's RPC port: base gets another one, and the log says so.
    const basePort = Number(new URL(before.chains.find((x) => x.name === 'base')!.rpcUrl).port);
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(basePort, '127.0.0.1', resolve));
    for (const name of CHAIN_NAMES) {
      const files = chainStateFiles(join(dataDir, 'devnet'), name);
      rmSync(files.current);
      rmSync(files.previous, { force: true });
    }

    logs.length = 0;
    devnet = await startDevnet({ dataDir, log: (line) => logs.push(line) });
    expect(devnet.manifest.fresh).toBe(true);
    expect(logs.some((l) => l.includes('devnet is fresh: chain state was reset'))).toBe(true);
    expect(addressesOf(devnet.manifest)).toEqual(addressesOf(before));
    expect(loadManifest(devnet.manifestPath).fresh).toBe(true);
    await new Promise((resolve) => squatter.close(resolve));
    const rpcUrl = (m: typeof before, name: string) => m.chains.find((x) => x.name === name)!.rpcUrl;
    expect(rpcUrl(devnet.manifest, 'base')).not.toBe(rpcUrl(before, 'base'));
    expect(logs.some((l) => l.includes(`base: RPC port ${basePort} is taken`))).toBe(true);
    for (const name of ['ethereum', 'arbitrum']) expect(rpcUrl(devnet.manifest, name)).toBe(rpcUrl(before, name));
    const c = devnet.manifest.chains[0]!;
    expect(await clientsFor(c).client.readContract({ address: c.testContracts.counter, abi: counterAbi, functionName: 'number' })).toBe(0n);
    // The L1 fee stand-ins are back too, with the devnet's parameters.
    const chainClient = (name: string) => clientsFor(devnet.manifest.chains.find((x) => x.name === name)!).client;
    expect(await chainClient('base').readContract({ address: OP_STACK_GAS_PRICE_ORACLE, abi: devnetGasPriceOracleAbi, functionName: 'l1BaseFee' })).toBe(
      DEVNET_L1_FEE_PARAMETERS.opStack.l1BaseFee,
    );
    expect(await chainClient('arbitrum').readContract({ address: ARBITRUM_NODE_INTERFACE, abi: devnetNodeInterfaceAbi, functionName: 'pricePerUnit' })).toBe(
      DEVNET_L1_FEE_PARAMETERS.arbitrum.pricePerUnit,
    );
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


describe('chain state survives crashes and corrupt files', () => {
  const dirs: string[] = [];
  const newDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-wallet-devnet-state-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const counterOf = (d: Devnet, name: string) => {
    const c = d.manifest.chains.find((chain) => chain.name === name)!;
    const { chain, client } = clientsFor(c);
    const wallet = devnetWalletClient(chain, d.manifest.accounts.funded[4]!.privateKey);
    return {
      set: (n: bigint) => wallet.writeContractSync({ address: c.testContracts.counter, abi: counterAbi, functionName: 'setNumber', args: [n] }),
      get: () => client.readContract({ address: c.testContracts.counter, abi: counterAbi, functionName: 'number' }),
    };
  };

  test('a torn, empty or garbled snapshot falls back to the previous one, and the log says so', async () => {
    const dataDir = newDir();
    // Snapshots only when asked (no background checks), so the test knows what each file holds.
    let devnet = await startDevnet({ dataDir, log: () => {}, snapshots: { pollMs: 3_600_000 } });
    for (const value of [1n, 2n]) {
      await Promise.all(CHAIN_NAMES.map((name) => counterOf(devnet, name).set(value)));
      await devnet.flushSnapshots();
    }
    await devnet.stop();
    // Now each chain's current snapshot has number = 2 and its previous one number = 1.
    const files = (name: string) => chainStateFiles(join(dataDir, 'devnet'), name);
    const eth = files('ethereum');
    const base = files('base');
    const arb = files('arbitrum');
    const whole = readFileSync(eth.current);
    writeFileSync(eth.current, whole.subarray(0, Math.floor(whole.length / 2))); // cut mid-write
    writeFileSync(base.current, ''); // created, never filled
    writeFileSync(arb.current, randomBytes(4096)); // garbage, and its previous snapshot as well
    writeFileSync(arb.previous, '{"not": "a snapshot"}');
    writeFileSync(eth.temp, 'half of a snapshot being written when the power went'); // never read

    const logs: string[] = [];
    devnet = await startDevnet({ dataDir, log: (line) => logs.push(line) });
    try {
      // The previous snapshot holds 1; the journal brings back the 2 set after it. arbitrum has no snapshot
      // left to replay its journal onto: it starts empty.
      expect(await counterOf(devnet, 'ethereum').get()).toBe(2n);
      expect(await counterOf(devnet, 'base').get()).toBe(2n);
      expect(await counterOf(devnet, 'arbitrum').get()).toBe(0n);
      const fellBack = logs.filter((l) => l.includes('falls back to the last good snapshot'));
      expect(fellBack).toHaveLength(2);
      expect(fellBack.find((l) => l.includes('devnet: ethereum '))).toContain(eth.previous);
      expect(fellBack.find((l) => l.includes('devnet: base '))).toContain(base.previous);
      expect(logs.filter((l) => /devnet: (ethereum|base) replayed [1-9]/.test(l))).toHaveLength(2);
      expect(logs.some((l) => l.includes('devnet: arbitrum has no snapshot for its journal to apply to: moved to'))).toBe(true);
      expect(logs.find((l) => l.includes(`ethereum snapshot ${eth.current} is unusable`))).toMatch(/unexpected end of file/);
      expect(logs.some((l) => l.includes('arbitrum has no usable snapshot'))).toBe(true);
      expect(logs.some((l) => l.includes('devnet is fresh: chain state was reset (arbitrum)'))).toBe(true);
      // The unusable files are kept aside, and every chain has a good current snapshot again.
      expect(existsSync(`${eth.current}.unusable`) && existsSync(`${base.current}.unusable`) && existsSync(`${arb.previous}.unusable`)).toBe(true);
      for (const f of [eth, base, arb]) expect(await snapshotHeight(f.current)).toBeGreaterThan(0);
    } finally {
      await devnet.stop();
    }

    // A crash between the two renames of a write leaves no current snapshot: the previous one is loaded, and
    // the journal replayed onto it.
    rmSync(base.current);
    logs.length = 0;
    devnet = await startDevnet({ dataDir, log: (line) => logs.push(line) });
    try {
      expect(await counterOf(devnet, 'base').get()).toBe(2n);
      expect(logs.some((l) => l.includes(`devnet: base has no current snapshot (a crash while replacing it): loads ${base.previous}`))).toBe(true);
      expect(devnet.manifest.fresh).toBe(false);
    } finally {
      await devnet.stop();
    }
  });

  test('stop() saves what the checks had not yet; a legacy --state file is loaded once, then replaced', async () => {
    const dataDir = newDir();
    // No background checks: only the final snapshot of stop() can save the new number.
    let devnet = await startDevnet({ dataDir, log: () => {}, snapshots: { pollMs: 3_600_000 } });
    await counterOf(devnet, 'ethereum').set(7n);
    await devnet.stop();
    devnet = await startDevnet({ dataDir, log: () => {} });
    expect(await counterOf(devnet, 'ethereum').get()).toBe(7n);
    await devnet.stop();

    // What an earlier version left: anvil's own plain-JSON `--state` file per chain, no snapshots, no journal.
    for (const name of CHAIN_NAMES) {
      const files = chainStateFiles(join(dataDir, 'devnet'), name);
      writeFileSync(files.legacy, gunzipSync(readFileSync(files.current)));
      rmSync(files.current);
      rmSync(files.previous, { force: true });
      rmSync(journalDir(join(dataDir, 'devnet'), name), { recursive: true });
    }
    const logs: string[] = [];
    devnet = await startDevnet({ dataDir, log: (line) => logs.push(line) });
    try {
      expect(devnet.manifest.fresh).toBe(false);
      expect(await counterOf(devnet, 'ethereum').get()).toBe(7n);
      expect(logs.filter((l) => l.includes('loads the legacy state file'))).toHaveLength(3);
      for (const name of CHAIN_NAMES) {
        const files = chainStateFiles(join(dataDir, 'devnet'), name);
        expect(existsSync(files.legacy), name).toBe(false);
        expect(await snapshotHeight(files.current), name).toBeGreaterThan(0);
      }
    } finally {
      await devnet.stop();
    }
  });

  test('kill -9 of the whole process group: the restart is clean, with its contracts and earlier blocks', async () => {
    const dataDir = newDir();
    const { child, exited } = await startChild(dataDir, 'wait', { detached: true });
    const before = loadManifest(join(dataDir, 'devnet', 'manifest.json'));
    const c = before.chains.find((chain) => chain.name === 'ethereum')!;
    const { chain, client } = clientsFor(c);
    const wallet = devnetWalletClient(chain, before.accounts.funded[4]!.privateKey);
    const increment = () => wallet.writeContractSync({ address: c.testContracts.counter, abi: counterAbi, functionName: 'incrementBy', args: [5n] });
    const receipt = await increment();
    const statePath = chainStateFiles(join(dataDir, 'devnet'), 'ethereum').current;
    expect(await eventually(async () => ((await snapshotHeight(statePath)) ?? 0) >= Number(receipt.blockNumber))).toBe(true);
    const hashes = await Promise.all(
      Array.from({ length: Number(receipt.blockNumber) + 1 }, async (_, n) => (await client.getBlock({ blockNumber: BigInt(n) })).hash),
    );

    // Blocks keep coming while the kill lands, so it may well cut a snapshot in the middle.
    let sent = 0;
    const sending = (async () => {
      for (;;) {
        await increment();
        sent++;
      }
    })().catch(() => undefined);
    expect(await eventually(() => sent >= 10)).toBe(true);
    process.kill(-child.pid!, 'SIGKILL');
    await Promise.all([exited, sending]);
    expect(devnetAnvilPids(dataDir)).toEqual([]);

    const logs: string[] = [];
    const devnet = await startDevnet({ dataDir, log: (line) => logs.push(line) });
    try {
      expect(devnet.manifest.fresh).toBe(false);
      expect(logs.filter((l) => l.includes('fresh') || l.includes('unusable'))).toEqual([]);
      const after = clientsFor(devnet.manifest.chains.find((chain) => chain.name === 'ethereum')!).client;
      const kept = await Promise.all(hashes.map(async (_, n) => (await after.getBlock({ blockNumber: BigInt(n) })).hash));
      expect(kept).toEqual(hashes);
      // What the service reads back about a transaction: its receipt and its logs.
      const again = await after.getTransactionReceipt({ hash: receipt.transactionHash });
      expect(again.status).toBe('success');
      expect(again.blockHash).toBe(receipt.blockHash);
      const logsThen = await after.getLogs({ address: c.testContracts.counter, fromBlock: receipt.blockNumber, toBlock: receipt.blockNumber });
      expect(logsThen.map((l) => l.transactionHash)).toEqual([receipt.transactionHash]);
      const number = await after.readContract({ address: c.testContracts.counter, abi: counterAbi, functionName: 'number' });
      expect(number).toBeGreaterThanOrEqual(5n);
      expect(number % 5n).toBe(0n);
    } finally {
      await devnet.stop();
    }
  });
});

describe('a failed start stops everything it started', () => {
  const dirs: string[] = [];
  const newDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-wallet-devnet-fail-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('one chain fails while the others are still starting; they are stopped, even one that finishes later', async () => {
    const dataDir = newDir();
    const spawned = new Map<string, number>();
    let ethereumReady!: () => void;
    const ethereumIsReady = new Promise<void>((resolve) => (ethereumReady = resolve));
    let arbitrumSpawned!: () => void;
    const arbitrumHasSpawned = new Promise<void>((resolve) => (arbitrumSpawned = resolve));
    let baseFailed!: () => void;
    const baseHasFailed = new Promise<void>((resolve) => (baseFailed = resolve));

    const startNode = async (chain: string, params: Parameters<typeof startAnvil>[0]): Promise<AnvilInstance> => {
      if (chain === 'base') {
        await Promise.all([ethereumIsReady, arbitrumHasSpawned]);
        setImmediate(baseFailed);
        throw new Error('injected: base cannot start');
      }
      const node = await startAnvil({
        ...params,
        onSpawn: (pid) => {
          params.onSpawn?.(pid);
          spawned.set(chain, pid);
          if (chain === 'arbitrum') arbitrumSpawned();
        },
      });
      if (chain === 'ethereum') {
        // Up and answering, but its start returns only after base has failed: the case that used to leak.
        ethereumReady();
        await baseHasFailed;
      }
      return node;
    };

    const failure = await startDevnet({ dataDir, log: () => {}, startNode }).catch((e: unknown) => e);
    expect([...spawned.keys()].sort()).toEqual(['arbitrum', 'ethereum']);
    // Checked at once: a start that resolves after the failure must already have been stopped by then.
    await baseHasFailed;
    expect([...spawned.values()].filter(isRunning)).toEqual([]);
    expect(devnetAnvilPids(dataDir)).toEqual([]);
    expect(anvilPids(dataDir)).toEqual([]);
    expect(failure).toBeInstanceOf(DevnetError);
    expect((failure as DevnetError).code).toBe('StartFailed');
    expect((failure as DevnetError).message).toContain('the base chain failed to start: injected: base cannot start');
  });

  test('`agent-wallet dev` exits non-zero with the reason when an anvil refuses its state, leaving no anvil running', async () => {
    const dataDir = newDir();
    const files = chainStateFiles(join(dataDir, 'devnet'), 'base');
    mkdirSync(join(dataDir, 'devnet'), { recursive: true });
    // Well-formed enough for the devnet's checks, refused by anvil (as a snapshot from an incompatible anvil would be).
    const refused = { block: {}, accounts: { '0x0000000000000000000000000000000000000001': { nonce: 'not a number' } }, best_block_number: 0, blocks: [], transactions: [] };
    writeFileSync(files.current, gzipSync(JSON.stringify(refused)));

    const child = spawn(process.execPath, ['bin/agent-wallet.js', 'dev', '--data-dir', dataDir, '--port', '0'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    // Should it hang (the failure this guards against), leave nothing behind once the test has failed.
    onTestFinished(() => {
      child.kill('SIGKILL');
      for (const pid of devnetAnvilPids(dataDir)) process.kill(pid, 'SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));

    expect(code, stdout + stderr).toBe(1);
    expect(stderr).toContain('the base chain failed to start');
    expect(stderr).toMatch(/anvil \(chain 84532\) exited with 2 while starting/);
    expect(stderr).toContain('failed to parse json file');
    expect(stderr).toContain(`(state from ${files.current})`);
    expect(stdout).not.toContain('listening');
    expect(devnetAnvilPids(dataDir)).toEqual([]);
    expect(anvilPids(dataDir)).toEqual([]);
  });
});

function revertReason(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
  return reverted instanceof ContractFunctionRevertedError ? reverted.reason : undefined;
}
