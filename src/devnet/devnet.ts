import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHAIN_IDS, CHAIN_NAMES, type ChainName } from '../config/chains.ts';
import { ChainConfigSchema, type ChainConfig } from '../config/chainConfig.ts';
import { AgentWalletError } from '../lib/errors.ts';
import { devnetAccounts, ANVIL_ACCOUNT_COUNT, type DevnetAccounts } from './accounts.ts';
import { onSignalExit, startAnvil, type AnvilInstance, type StartAnvilParameters } from './anvil.ts';
import { devnetChain } from './clients.ts';
import { CANONICAL, isPaymentToken, TEST_STABLECOIN_EIP712_VERSION, counterDeployment, entryPointDeployment, factoryDeployment, gateDeployment, paymasterAddress, tokenDeployments } from './contracts.ts';
import { deployChain } from './deploy.ts';
import { DEVNET_PROTOCOLS } from './protocols/index.ts';
import { DevnetManifestSchema, type DevnetChain, type DevnetManifest } from './manifest.ts';
import type { ProtocolsConfig } from '../config/protocols.ts';
import { reapStaleAnvil, writeAnvilPid } from './pidfile.ts';
import { nodeRpc, type NodeRpc } from './rpc.ts';
import { latestHead, startSnapshotter, type Snapshotter, type SnapshotStats } from './snapshotter.ts';
import { chainStateFiles, prepareChainState } from './stateFile.ts';

export interface StartDevnetOptions {
  /** The service's data dir: the devnet keeps its chain state and manifest in `<dataDir>/devnet/`. */
  dataDir: string;
  log?: (line: string) => void;
  /** Snapshot tuning (snapshotter.ts): head check interval and the share of time snapshots may take. */
  snapshots?: { pollMs?: number; maxDuty?: number };
  /** Starts one chain's node; anvil unless a test wraps it (to make one start fail, or finish late). */
  startNode?: (chain: ChainName, params: StartAnvilParameters) => Promise<AnvilInstance>;
}

export interface Devnet {
  manifest: DevnetManifest;
  manifestPath: string;
  /** One ChainConfig per chain, ready for the chain workers. */
  chainConfigs(): ChainConfig[];
  /** Per chain: head checks and snapshots written so far, the last one's size and duration. */
  snapshotStats(): Record<ChainName, SnapshotStats>;
  /** Resolves once every chain's snapshotter checked its head again (counts checks instead of waiting). */
  nextSnapshotPolls(): Promise<void>;
  /** Snapshots every chain that moved since its last snapshot, now. */
  flushSnapshots(): Promise<void>;
  /** Takes a last snapshot of every chain that moved, then stops every anvil. Safe to call twice. */
  stop(): Promise<void>;
}

export type DevnetErrorCode = 'StartFailed';

export class DevnetError extends AgentWalletError<DevnetErrorCode> {
  override readonly name = 'DevnetError';
}

/** One chain's running parts. */
interface ChainNode {
  node: AnvilInstance;
  rpc: NodeRpc;
  snapshotter: Snapshotter;
}

/**
 * Starts the local devnet: one anvil per chain (ethereum, base, arbitrum with their testnets' chain ids), state
 * persisted under `<dataDir>/devnet/`, every contract the service needs at fixed addresses. A restart with the
 * same dataDir reloads the chains from their last snapshots; if their state is gone the contracts are deployed
 * again at the same addresses and `manifest.fresh` is true. If any chain fails to start, everything started
 * (or still starting) is stopped before the returned promise rejects.
 */
export async function startDevnet(opts: StartDevnetOptions): Promise<Devnet> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const startNode = opts.startNode ?? ((_chain: ChainName, params: StartAnvilParameters) => startAnvil(params));
  const started = performance.now();
  const dir = join(opts.dataDir, 'devnet');
  mkdirSync(dir, { recursive: true });
  const manifestPath = join(dir, 'manifest.json');
  const hadManifest = existsSync(manifestPath);
  const accounts = devnetAccounts();

  const chains = new Map<ChainName, ChainNode>();
  const pidPath = (name: ChainName): string => join(dir, `${name}.pid`);
  const pidsWritten = new Set<ChainName>();
  let stopping: Promise<void> | undefined;
  const stop = (opts: { final: boolean }): Promise<void> =>
    (stopping ??= (async () => {
      unregisterSignalExit();
      await Promise.all(
        [...chains].map(async ([name, chain]) => {
          // A failed snapshot must not keep anvil running: the previous one is still on disk.
          await chain.snapshotter.stop(opts).catch((error: unknown) => log(`devnet: ${name} final snapshot failed: ${(error as Error).message}`));
          chain.rpc.close();
          await chain.node.stop();
        }),
      );
      for (const name of pidsWritten) rmSync(pidPath(name), { force: true });
      chains.clear();
    })());
  // A SIGINT/SIGTERM that nobody else handles still gets the final snapshots.
  const unregisterSignalExit = onSignalExit(() => stop({ final: true }));

  const startChain = async (name: ChainName, signal: AbortSignal): Promise<ChainNode> => {
    const files = chainStateFiles(dir, name);
    // A previous run killed with SIGKILL may have left its anvil running.
    await reapStaleAnvil(pidPath(name), { marker: files.current, legacyStatePath: files.legacy }, log);
    const prepared = await prepareChainState(files, name, log);
    let node: AnvilInstance;
    try {
      node = await startNode(name, {
        chainId: CHAIN_IDS[name],
        loadStatePath: prepared?.loadPath,
        marker: files.current,
        accounts: ANVIL_ACCOUNT_COUNT,
        signal,
        onSpawn: (pid) => {
          writeAnvilPid(pidPath(name), pid);
          pidsWritten.add(name);
        },
      });
    } catch (error) {
      // anvil's own message names the temporary load file; say which snapshot that was.
      if (prepared && !signal.aborted) throw new Error(`(state from ${prepared.source}) ${(error as Error).message}`, { cause: error });
      throw error;
    } finally {
      // anvil has read it by the time it answers (or it never will).
      if (prepared) rmSync(prepared.loadPath, { force: true });
    }
    const rpc = nodeRpc(node.rpcUrl);
    try {
      // A chain loaded from the current snapshot is saved as it stands; one that fell back (or came from the
      // legacy file) is written again at once, so that the current snapshot is good again.
      const savedHead = prepared?.source === files.current ? await latestHead(rpc) : undefined;
      const snapshotter = startSnapshotter({ chain: name, rpc, files, savedHead, ...opts.snapshots, log });
      return { node, rpc, snapshotter };
    } catch (error) {
      rpc.close();
      await node.stop();
      throw error;
    }
  };

  try {
    // All chains start at once; the first failure aborts the others, including starts still in progress.
    const abort = new AbortController();
    let firstFailure: DevnetError | undefined;
    await Promise.allSettled(
      CHAIN_NAMES.map(async (name) => {
        try {
          chains.set(name, await startChain(name, abort.signal));
        } catch (error) {
          if (firstFailure) return;
          firstFailure = new DevnetError('StartFailed', `devnet: the ${name} chain failed to start: ${(error as Error).message}`, { cause: error });
          abort.abort(firstFailure);
        }
      }),
    );
    if (firstFailure) throw firstFailure;
    const nodesUp = performance.now();

    const deployed = await Promise.all(
      CHAIN_NAMES.map(async (name) => {
        const { node } = chains.get(name)!;
        const chain = devnetChain({ chainId: node.chainId, name, rpcUrl: node.rpcUrl });
        const { deployed } = await deployChain({ chain, accounts, log });
        const syncSend = await supportsSyncSend(node.rpcUrl);
        const entry = manifestChain(name, node, accounts, syncSend);
        const protocols: ProtocolsConfig = {};
        // One after another: they share the protocol deployer's account, hence its nonce.
        for (const p of DEVNET_PROTOCOLS.filter((x) => x.chains.includes(name))) {
          const r = await p.deploy({ chain, name, deployer: accounts.protocolDeployer, funded: accounts.funded, tokens: entry.tokens, log });
          Object.assign(protocols, { [p.key]: r.config });
          deployed.push(...r.deployed.map((d) => `${p.key}: ${d}`));
        }
        return { entry: { ...entry, ...(Object.keys(protocols).length > 0 && { protocols }) }, deployed };
      }),
    );
    // Ready means saved: what the start deployed is on disk before anyone relies on it.
    await Promise.all([...chains.values()].map((c) => c.snapshotter.flush()));

    const fresh = deployed.some((c) => c.deployed.length > 0);
    if (fresh && hadManifest) {
      const reset = deployed.filter((c) => c.deployed.length > 0).map((c) => c.entry.name);
      log(`devnet is fresh: chain state was reset (${reset.join(', ')}); contracts redeployed at the same addresses`);
    } else if (fresh) {
      log(`devnet is fresh: first start in ${dir}`);
    }

    const manifest = DevnetManifestSchema.parse({
      version: 1,
      createdAt: new Date().toISOString(),
      fresh,
      chains: deployed.map((c) => c.entry),
      accounts: {
        deployer: accounts.deployer,
        paymasterSigner: accounts.paymasterSigner,
        executors: accounts.executors,
        protocolDeployer: accounts.protocolDeployer,
        settler: accounts.settler,
        faucet: accounts.faucet,
        funded: accounts.funded,
      },
    } satisfies DevnetManifest);
    // Write-then-rename: a reader never sees half a manifest.
    writeFileSync(`${manifestPath}.tmp`, `${JSON.stringify(manifest, null, 2)}\n`);
    renameSync(`${manifestPath}.tmp`, manifestPath);

    const done = performance.now();
    log(
      `devnet ready in ${Math.round(done - started)} ms (nodes ${Math.round(nodesUp - started)} ms, ` +
        `${fresh ? 'deploy' : 'verify'} ${Math.round(done - nodesUp)} ms): ` +
        manifest.chains.map((c) => `${c.name} ${c.rpcUrl}`).join(', '),
    );
    const eachChain = <T>(f: (c: ChainNode) => T): Record<ChainName, T> =>
      Object.fromEntries(CHAIN_NAMES.map((name) => [name, f(chains.get(name)!)])) as Record<ChainName, T>;
    return {
      manifest,
      manifestPath,
      chainConfigs: () => chainConfigsFromManifest(manifest),
      snapshotStats: () => eachChain((c) => c.snapshotter.stats()),
      nextSnapshotPolls: async () => {
        await Promise.all(Object.values(eachChain((c) => c.snapshotter.nextPoll())));
      },
      flushSnapshots: async () => {
        await Promise.all([...chains.values()].map((c) => c.snapshotter.flush()));
      },
      stop: () => stop({ final: true }),
    };
  } catch (error) {
    // Nothing worth keeping was made by a failed start: the state on disk stays as it was loaded.
    await stop({ final: false });
    throw error;
  }
}

/** Reads and validates a manifest written by startDevnet (for tests and other processes). */
export function loadManifest(path: string): DevnetManifest {
  return DevnetManifestSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
}

/** Builds the chain workers' configs from a manifest; the first executor also collects the gas refunds. */
export function chainConfigsFromManifest(manifest: DevnetManifest): ChainConfig[] {
  const executorKeys = manifest.accounts.executors.map((a) => a.privateKey);
  const beneficiary = manifest.accounts.executors[0]?.address;
  if (!beneficiary) throw new Error('devnet manifest has no executor accounts');
  return manifest.chains.map((c) =>
    ChainConfigSchema.parse({
      name: c.name,
      chainId: c.chainId,
      rpcUrl: c.rpcUrl,
      entryPoint: c.entryPoint,
      simpleAccountFactory: c.simpleAccountFactory,
      paymaster: c.paymaster,
      paymasterSignerKey: manifest.accounts.paymasterSigner.privateKey,
      executorKeys,
      beneficiary,
      treasury: c.treasury,
      tokens: c.tokens,
      protocols: c.protocols ?? {},
      // anvil mines each transaction at once: polling for receipts every 250 ms would only add latency.
      bundler: { syncSend: c.syncSend ?? false, receiptPollMs: 20 },
    }),
  );
}

function manifestChain(name: ChainName, node: AnvilInstance, accounts: DevnetAccounts, syncSend: boolean): DevnetChain {
  return {
    name,
    chainId: node.chainId,
    rpcUrl: node.rpcUrl,
    entryPoint: entryPointDeployment.address,
    simpleAccountFactory: factoryDeployment.address,
    accountImplementation: CANONICAL.accountImplementation,
    paymaster: paymasterAddress(accounts.deployer.address),
    treasury: accounts.treasury.address,
    // Spec §2.7: USDT is accepted for payment only on ethereum; WETH never (it is the protocols' collateral).
    tokens: tokenDeployments.map((t) => ({
      symbol: t.symbol,
      address: t.address,
      decimals: t.decimals,
      acceptedForPayment: isPaymentToken(t.symbol) && (t.symbol !== 'USDT' || name === 'ethereum'),
      ...(t.eip3009 && { eip3009: { name: t.name, version: TEST_STABLECOIN_EIP712_VERSION } }),
    })),
    testContracts: { counter: counterDeployment.address, gate: gateDeployment.address },
    syncSend,
  };
}

/**
 * Whether the node implements `eth_sendRawTransactionSync` (EIP-7966). An empty payload is rejected either as
 * an unknown method (-32601) or as a bad transaction: only the first means "unsupported", and nothing is sent.
 */
async function supportsSyncSend(rpcUrl: string): Promise<boolean> {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransactionSync', params: ['0x'] }),
  });
  const body = (await response.json()) as { error?: { code: number } };
  return body.error?.code !== -32601;
}
