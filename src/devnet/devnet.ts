import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHAIN_NAMES, type ChainName } from '../config/chains.ts';
import { ChainConfigSchema, type ChainConfig } from '../config/chainConfig.ts';
import { devnetAccounts, type DevnetAccounts } from './accounts.ts';
import { onSignalExit, startAnvil, type AnvilInstance, type StartAnvilParameters } from './anvil.ts';
import { startChainNode, type ChainNode } from './chainNode.ts';
import { devnetChain } from './clients.ts';
import { CANONICAL, isPaymentToken, TEST_STABLECOIN_EIP712_VERSION, counterDeployment, entryPointDeployment, factoryDeployment, gateDeployment, paymasterAddress, tokenDeployments } from './contracts.ts';
import { deployChain } from './deploy.ts';
import { DEVNET_L1_DATA_FEE } from './l1DataFee.ts';
import { DEVNET_PROTOCOLS, type DevnetProtocolOptions, type ProtocolRun } from './protocols/index.ts';
import { DevnetManifestSchema, type DevnetChain, type DevnetManifest } from './manifest.ts';
import type { ProtocolsConfig } from '../protocols/config.ts';
import { DevnetError } from './errors.ts';
import { ensurePrivateTree, PRIVATE_FILE_MODE } from '../lib/privateFs.ts';
import type { SnapshotStats } from './snapshotter.ts';
import type { Address } from 'viem';
import { aaveV3PriceFeeds } from './protocols/aaveV3/layout.ts';
import { cometDeployments } from './protocols/compoundV3/deployments.ts';
import { USDC_MARKET } from './protocols/compoundV3/market.ts';
import { gmxPriceFeeds } from './protocols/gmxV2/deployments.ts';

export interface StartDevnetOptions {
  /** The service's data dir: the devnet keeps its chain state and manifest in `<dataDir>/devnet/`. */
  dataDir: string;
  log?: (line: string) => void;
  /** Snapshot tuning (snapshotter.ts): head check interval and the share of time snapshots may take. */
  snapshots?: { pollMs?: number; maxDuty?: number };
  /** Starts one chain's node; anvil unless a test wraps it (to make one start fail, or finish late). */
  startNode?: (chain: ChainName, params: StartAnvilParameters) => Promise<AnvilInstance>;
  /** Options of what the protocols run beside their contracts (the GMX keeper's delay). */
  protocols?: DevnetProtocolOptions;
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

export { DevnetError, type DevnetErrorCode } from './errors.ts';

/**
 * Starts the local devnet: one anvil per chain (ethereum, base, arbitrum with their testnets' chain ids), each
 * behind a loopback proxy that journals every state-changing call (the manifest's rpcUrl), state persisted
 * under `<dataDir>/devnet/`, every contract the service needs at fixed addresses. A restart with the same
 * dataDir reloads the chains from their last snapshots and replays the journaled calls that came after them; if
 * their state is gone the contracts are deployed again at the same addresses and `manifest.fresh` is true. If
 * any chain fails to start, everything started (or still starting) is stopped before the returned promise
 * rejects: with a DevnetError, `ReplayRefused` or `JournalUnusable` when a chain's journal cannot bring it back
 * to what its clients were answered (see chainNode.ts).
 */
export async function startDevnet(opts: StartDevnetOptions): Promise<Devnet> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const startNode = opts.startNode ?? ((_chain: ChainName, params: StartAnvilParameters) => startAnvil(params));
  const started = performance.now();
  const dir = join(opts.dataDir, 'devnet');
  // Owner only, whatever the umask, and so are files earlier versions left readable to all.
  await ensurePrivateTree(dir);
  const manifestPath = join(dir, 'manifest.json');
  const hadManifest = existsSync(manifestPath);
  const rpcPorts = previousRpcPorts(manifestPath);
  const lastProtocols = previousProtocols(manifestPath);
  const accounts = devnetAccounts();

  const chains = new Map<ChainName, ChainNode>();
  const runs: ProtocolRun[] = [];
  let stopping: Promise<void> | undefined;
  const stop = (opts: { final: boolean }): Promise<void> =>
    (stopping ??= (async () => {
      unregisterSignalExit();
      // The protocols' processes first: a keeper must not send to a chain that is stopping.
      await Promise.all(runs.splice(0).map((r) => r.stop()));
      await Promise.all([...chains.values()].map((chain) => chain.stop(opts)));
      chains.clear();
    })());
  // A SIGINT/SIGTERM that nobody else handles still gets the final snapshots.
  const unregisterSignalExit = onSignalExit(() => stop({ final: true }));

  try {
    // All chains start at once; the first failure aborts the others, including starts still in progress.
    const abort = new AbortController();
    let firstFailure: DevnetError | undefined;
    await Promise.allSettled(
      CHAIN_NAMES.map(async (name) => {
        try {
          chains.set(name, await startChainNode({ name, dataDir: opts.dataDir, signal: abort.signal, startNode, snapshots: opts.snapshots, rpcPort: rpcPorts.get(name), log }));
        } catch (error) {
          if (firstFailure) return;
          // A refused replay already says which chain and what to do.
          firstFailure =
            error instanceof DevnetError ? error : new DevnetError('StartFailed', `devnet: the ${name} chain failed to start: ${(error as Error).message}`, { cause: error });
          abort.abort(firstFailure);
        }
      }),
    );
    if (firstFailure) throw firstFailure;
    const nodesUp = performance.now();

    const deployed = await Promise.all(
      CHAIN_NAMES.map(async (name) => {
        const { node, rpcUrl } = chains.get(name)!;
        // Straight to anvil, not through the journal: nobody is given the chain's URL before the snapshot at the
        // end of this start holds the deployment (below), and a crash before that deploys again, as a lost state
        // does. So the deployment (and a reload's check of it) does not pay the proxy's hop and fsyncs.
        const chain = devnetChain({ chainId: node.chainId, name, rpcUrl: node.rpcUrl });
        const { deployed } = await deployChain({ chain, accounts, log, l1DataFee: DEVNET_L1_DATA_FEE[name] });
        const syncSend = await supportsSyncSend(node.rpcUrl);
        const entry = manifestChain(name, node.chainId, rpcUrl, accounts, syncSend);
        const protocols: ProtocolsConfig = {};
        // One after another: they share the protocol deployer's account, hence its nonce.
        for (const p of DEVNET_PROTOCOLS.filter((x) => x.chains.includes(name))) {
          const ctx = { chain, name, deployer: accounts.protocolDeployer, funded: accounts.funded, tokens: entry.tokens, log };
          const r = await p.deploy(ctx);
          let config = r.config;
          if (p.run) {
            // Its processes talk to the journaled RPC (rpcUrl), as the service does: their transactions replay.
            const previous = lastProtocols.get(name)?.[p.key];
            const run = await p.run({ ...ctx, chain: devnetChain({ chainId: node.chainId, name, rpcUrl }), config, previous, options: opts.protocols ?? {} });
            runs.push(run);
            config = { ...config, ...run.configPatch } as typeof config;
          }
          Object.assign(protocols, { [p.key]: config });
          deployed.push(...r.deployed.map((d) => `${p.key}: ${d}`));
        }
        return { entry: { ...entry, ...(Object.keys(protocols).length > 0 && { protocols }) }, deployed };
      }),
    );
    // Ready means saved: what the start deployed is on disk before anyone relies on it (a failure fails the start).
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
        gmxKeeper: accounts.gmxKeeper,
        funded: accounts.funded,
      },
    } satisfies DevnetManifest);
    // Write-then-rename: a reader never sees half a manifest.
    writeFileSync(`${manifestPath}.tmp`, `${JSON.stringify(manifest, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
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

/**
 * Each chain's RPC port in the manifest of the data directory's last run, so a restart keeps the URLs that
 * wallets, scripts and docs were given. A manifest that is missing or unreadable gives none (free ports).
 */
function previousRpcPorts(manifestPath: string): Map<ChainName, number> {
  const ports = new Map<ChainName, number>();
  let manifest: DevnetManifest;
  try {
    manifest = loadManifest(manifestPath);
  } catch {
    return ports;
  }
  for (const c of manifest.chains) {
    const port = Number(new URL(c.rpcUrl).port);
    if (Number.isInteger(port) && port > 0) ports.set(c.name, port);
  }
  return ports;
}

/** Each chain's protocol sections in the last run's manifest (so a restarted server keeps its URL), if readable. */
function previousProtocols(manifestPath: string): Map<ChainName, ProtocolsConfig> {
  try {
    return new Map(loadManifest(manifestPath).chains.map((c) => [c.name, (c.protocols ?? {}) as ProtocolsConfig]));
  } catch {
    return new Map();
  }
}

/** Reads and validates a manifest written by startDevnet (for tests and other processes). */
export function loadManifest(path: string): DevnetManifest {
  return DevnetManifestSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
}

/** Where the faucet account sits among the funded accounts of a manifest older than accounts.faucet. */
export const DEVNET_FAUCET_FUNDED_INDEX = 4;
/** The most aUSD one devnet faucet transfer moves (the faucet drips 100 by default). */
export const DEVNET_FAUCET_CAP_AUSD = '1000';

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
      protocols: c.protocols,
      // The faucet's drips go through the chain worker, from the devnet's faucet account (older manifests: funded[4]).
      sendingAccounts: { faucetKey: (manifest.accounts.faucet ?? manifest.accounts.funded[DEVNET_FAUCET_FUNDED_INDEX])?.privateKey },
      faucetCap: { tokens: { aUSD: DEVNET_FAUCET_CAP_AUSD } },
      // anvil mines each transaction at once: polling for receipts every 250 ms would only add latency.
      bundler: { syncSend: c.syncSend ?? false, receiptPollMs: 20 },
      prices: devnetPrices(c, manifest.accounts.protocolDeployer?.address),
      l1DataFee: c.l1DataFee,
    }),
  );
}

/** A devnet feed's answer dates from its deployment (or its last setAnswer), and a devnet is kept for months. */
export const DEVNET_PRICE_MAX_AGE_SECONDS = 365 * 86_400;

/**
 * The devnet's prices: USDC, WETH and the native coin (as WETH) read from the USD feeds (AggregatorV3) of the lending
 * or perp protocol the chain runs: Aave v3's reserve feeds on ethereum (what its oracle reads), Compound v3's on base,
 * GMX v2's on arbitrum. Other tokens (aUSD, USDT, receipt tokens) are unpriced. A chain without those protocols
 * prices only the native coin, at nativeUsdPrice.
 */
function devnetPrices(c: DevnetChain, protocolDeployer: Address | undefined) {
  if (!protocolDeployer) return undefined;
  const protocols = c.protocols ?? {};
  let feeds: Record<string, Address> | undefined;
  if (protocols.aaveV3) feeds = aaveV3PriceFeeds(protocolDeployer);
  else if (protocols.compoundV3) {
    const comet = cometDeployments({ tokens: c.tokens, owner: protocolDeployer });
    feeds = Object.fromEntries([[USDC_MARKET.base.symbol, comet.baseFeed.address], ...USDC_MARKET.collateral.map((m, i) => [m.symbol, comet.collateralFeeds[i]!.address])]);
  } else if (protocols.gmxV2) {
    feeds = Object.fromEntries(gmxPriceFeeds({ tokens: c.tokens, owner: protocolDeployer }).map((f) => [f.symbol, f.deployment.address]));
  }
  if (!feeds?.USDC || !feeds.WETH) return undefined;
  return {
    maxAgeSeconds: DEVNET_PRICE_MAX_AGE_SECONDS,
    native: { feed: feeds.WETH },
    tokens: { USDC: { feed: feeds.USDC }, WETH: { feed: feeds.WETH } },
  };
}

function manifestChain(name: ChainName, chainId: number, rpcUrl: string, accounts: DevnetAccounts, syncSend: boolean): DevnetChain {
  return {
    name,
    chainId,
    rpcUrl,
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
    l1DataFee: DEVNET_L1_DATA_FEE[name],
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
