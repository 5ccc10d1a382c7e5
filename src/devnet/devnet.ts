import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHAIN_IDS, CHAIN_NAMES, type ChainName } from '../config/chains.ts';
import { ChainConfigSchema, type ChainConfig } from '../config/chainConfig.ts';
import { devnetAccounts, ANVIL_ACCOUNT_COUNT, type DevnetAccounts } from './accounts.ts';
import { startAnvil, type AnvilInstance } from './anvil.ts';
import { devnetChain } from './clients.ts';
import { CANONICAL, counterDeployment, entryPointDeployment, factoryDeployment, gateDeployment, paymasterAddress, tokenDeployments } from './contracts.ts';
import { deployChain } from './deploy.ts';
import { DevnetManifestSchema, type DevnetChain, type DevnetManifest } from './manifest.ts';
import { reapStaleAnvil, writeAnvilPid } from './pidfile.ts';

export interface StartDevnetOptions {
  /** The service's data dir: the devnet keeps its chain state and manifest in `<dataDir>/devnet/`. */
  dataDir: string;
  log?: (line: string) => void;
}

export interface Devnet {
  manifest: DevnetManifest;
  manifestPath: string;
  /** One ChainConfig per chain, ready for the chain workers. */
  chainConfigs(): ChainConfig[];
  /** Stops every anvil (each dumps its state first). Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Starts the local devnet: one anvil per chain (ethereum, base, arbitrum with their testnets' chain ids), state
 * persisted under `<dataDir>/devnet/`, every contract the service needs at fixed addresses. A restart with the
 * same dataDir reloads the chains; if their state is gone the contracts are deployed again at the same
 * addresses and `manifest.fresh` is true.
 */
export async function startDevnet(opts: StartDevnetOptions): Promise<Devnet> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const started = performance.now();
  const dir = join(opts.dataDir, 'devnet');
  mkdirSync(dir, { recursive: true });
  const manifestPath = join(dir, 'manifest.json');
  const hadManifest = existsSync(manifestPath);
  const accounts = devnetAccounts();

  const nodes = new Map<ChainName, AnvilInstance>();
  const pidPath = (name: ChainName): string => join(dir, `${name}.pid`);
  const stop = async (): Promise<void> => {
    await Promise.all(
      [...nodes].map(async ([name, node]) => {
        await node.stop();
        rmSync(pidPath(name), { force: true });
      }),
    );
    nodes.clear();
  };

  try {
    await Promise.all(
      CHAIN_NAMES.map(async (name) => {
        const statePath = join(dir, `${name}.json`);
        // A previous run killed with SIGKILL leaves its anvil running, dumping over our state file every second.
        await reapStaleAnvil(pidPath(name), statePath, log);
        const node = await startAnvil({ chainId: CHAIN_IDS[name], statePath, accounts: ANVIL_ACCOUNT_COUNT });
        nodes.set(name, node);
        writeAnvilPid(pidPath(name), node.pid);
      }),
    );
    const nodesUp = performance.now();

    const chains = await Promise.all(
      CHAIN_NAMES.map(async (name) => {
        const node = nodes.get(name)!;
        const chain = devnetChain({ chainId: node.chainId, name, rpcUrl: node.rpcUrl });
        const { deployed } = await deployChain({ chain, accounts, log });
        const syncSend = await supportsSyncSend(node.rpcUrl);
        return { entry: manifestChain(name, node, accounts, syncSend), deployed };
      }),
    );

    const fresh = chains.some((c) => c.deployed.length > 0);
    if (fresh && hadManifest) {
      const reset = chains.filter((c) => c.deployed.length > 0).map((c) => c.entry.name);
      log(`devnet is fresh: chain state was reset (${reset.join(', ')}); contracts redeployed at the same addresses`);
    } else if (fresh) {
      log(`devnet is fresh: first start in ${dir}`);
    }

    const manifest = DevnetManifestSchema.parse({
      version: 1,
      createdAt: new Date().toISOString(),
      fresh,
      chains: chains.map((c) => c.entry),
      accounts: {
        deployer: accounts.deployer,
        paymasterSigner: accounts.paymasterSigner,
        executors: accounts.executors,
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
    return { manifest, manifestPath, chainConfigs: () => chainConfigsFromManifest(manifest), stop };
  } catch (error) {
    await stop();
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
    // Spec §2.7: USDT is accepted for payment only on ethereum.
    tokens: tokenDeployments.map((t) => ({
      symbol: t.symbol,
      address: t.address,
      decimals: t.decimals,
      acceptedForPayment: t.symbol !== 'USDT' || name === 'ethereum',
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
