import { join } from 'node:path';
import { z } from 'zod';
import { privateKeyToAddress } from 'viem/accounts';
import { CliError, parse } from '../lib/args.ts';
import { canonicalChain } from '../config/chains.ts';
import { chainConfigsFromManifest, loadManifest } from '../devnet/devnet.ts';
import { doctorTarget, healthy, outsideBundlerUrl, runDoctor, type CheckResult, type DoctorTarget } from '../doctor/index.ts';
import { loadClusterConfig } from '../roles/cluster/config.ts';
import { keysFromEnv, NETWORK_OPTIONS, networkInputs, networkPublicConfig, type NetworkKeys } from '../roles/networks.ts';
import { colours, table } from './output.ts';
import { serviceDataDir } from './serviceDataDir.ts';

export const DOCTOR_OPTIONS = {
  config: { type: 'string' },
  'data-dir': { type: 'string' },
  chain: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  'timeout-ms': { type: 'string' },
  ...NETWORK_OPTIONS,
} as const;

/** `agent-wallet doctor`: the checks of src/doctor on the configuration the service would run with. */
export async function runDoctorCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values } = parse(argv, DOCTOR_OPTIONS);
  const sources = [values.config !== undefined, values.network !== undefined, values['data-dir'] !== undefined].filter(Boolean).length;
  if (sources > 1) throw new CliError('give one configuration: --config, --network or --data-dir');
  let targets = await (values.config !== undefined
    ? clusterTargets(values.config, env)
    : values.network !== undefined
      ? networkTargets(values, env)
      : devnetTargets(values['data-dir']));
  if (values.chain) {
    const wanted = values.chain.map((c) => canonicalChain(c) ?? c);
    const unknown = wanted.filter((c) => !targets.some((t) => t.config.name === c));
    if (unknown.length > 0) throw new CliError(`--chain ${unknown.join(', ')}: not in the configuration (${targets.map((t) => t.config.name).join(', ')})`);
    targets = targets.filter((t) => wanted.includes(t.config.name));
  }
  const timeoutMs = values['timeout-ms'] === undefined ? undefined : Number(values['timeout-ms']);
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) throw new CliError(`invalid --timeout-ms ${values['timeout-ms']}`);
  const results = await runDoctor(targets, { timeoutMs });
  process.stdout.write(values.json === true ? `${JSON.stringify({ ok: healthy(results), results }, null, 2)}\n` : render(results));
  return healthy(results) ? 0 : 1;
}

function render(results: readonly CheckResult[]): string {
  const c = colours();
  const paint = { ok: c.green, warn: c.yellow, fail: c.red };
  const rows = results.map((r) => [r.chain, r.id, paint[r.status](r.status), r.detail]);
  const fixes = results.filter((r) => r.status !== 'ok').map((r) => `  ${paint[r.status](r.status)} ${r.chain} ${r.id}: ${r.fix}`);
  const counts = (['ok', 'warn', 'fail'] as const).map((s) => `${results.filter((r) => r.status === s).length} ${s}`).join(', ');
  return `${table(['CHAIN', 'CHECK', 'STATUS', 'DETAIL'], rows)}${fixes.length > 0 ? `\nWhat to do:\n${fixes.join('\n')}\n` : ''}\n${counts}\n`;
}

/** The accounts' addresses of the keys given; a malformed key is a usage error naming its variable, never echoing it. */
function accountsOf(keys: NetworkKeys): DoctorTarget['accounts'] {
  const address = (key: string | undefined, variable: string) => {
    if (key === undefined) return undefined;
    if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new CliError(`${variable} must hold 0x-prefixed 32-byte private keys`);
    return privateKeyToAddress(key as `0x${string}`);
  };
  return {
    paymasterSigner: address(keys.paymasterSignerKey, 'AGENT_WALLET_PAYMASTER_SIGNER_KEY'),
    executors: keys.executorKeys.map((k) => address(k, 'AGENT_WALLET_EXECUTOR_KEYS')!),
    settler: address(keys.x402SettlerKey, 'AGENT_WALLET_X402_SETTLER_KEY'),
    faucet: address(keys.faucetKey, 'AGENT_WALLET_FAUCET_KEY'),
  };
}

/** A cluster's file, as its chain workers read it: AGENT_WALLET_RPC_URL stands in for a chain's missing rpcUrl. */
async function clusterTargets(path: string, env: NodeJS.ProcessEnv): Promise<DoctorTarget[]> {
  const config = await loadClusterConfig(path).catch((e: Error) => {
    throw new CliError(e.message);
  });
  const accounts = accountsOf(keysFromEnv(env));
  return config.chains.map(({ worker: _worker, ...pub }) => {
    const rpcUrl = env.AGENT_WALLET_RPC_URL || pub.rpcUrl;
    if (!rpcUrl) throw new CliError(`chain ${pub.name}: no RPC URL: set rpcUrl in the config or AGENT_WALLET_RPC_URL`);
    const parsed = z.url().safeParse(rpcUrl);
    if (!parsed.success) throw new CliError(`chain ${pub.name}: rpcUrl is not a URL`);
    // An outside bundler's URL may be in the worker's Secret instead (AGENT_WALLET_BUNDLER_URL), as the worker reads it.
    const bundlerUrl = env.AGENT_WALLET_BUNDLER_URL?.trim() || (pub.bundler.kind === 'rpc' ? pub.bundler.url : undefined);
    if (pub.bundler.kind === 'rpc' && !bundlerUrl) throw new CliError(`chain ${pub.name}: bundler.kind is rpc without a url: set bundler.url or AGENT_WALLET_BUNDLER_URL`);
    const bundler = pub.bundler.kind === 'rpc' ? { ...pub.bundler, url: bundlerUrl! } : pub.bundler;
    // So may an ERC-7677 paymaster service's (AGENT_WALLET_SPONSOR_URL).
    const sponsorUrl = env.AGENT_WALLET_SPONSOR_URL?.trim() || (pub.sponsor.kind === 'erc7677' ? pub.sponsor.url : undefined);
    if (pub.sponsor.kind === 'erc7677' && !sponsorUrl) throw new CliError(`chain ${pub.name}: sponsor.kind is erc7677 without a url: set sponsor.url or AGENT_WALLET_SPONSOR_URL`);
    const sponsor = pub.sponsor.kind === 'erc7677' ? { ...pub.sponsor, url: sponsorUrl! } : pub.sponsor;
    return { config: { ...pub, rpcUrl, bundler, sponsor, protocols: { ...pub.protocols } }, accounts, bundlerUrl: outsideBundlerUrl(bundler) };
  });
}

/** Shipped networks with the operator's flags and keys: the inputs `serve --network` takes. */
function networkTargets(values: Parameters<typeof networkInputs>[0], env: NodeJS.ProcessEnv): DoctorTarget[] {
  const keys = keysFromEnv(env);
  const accounts = accountsOf(keys);
  return networkInputs(values, accounts.executors[0]).map(({ name, inputs }) => {
    const config = networkPublicConfig(name, inputs);
    return { config, accounts, bundlerUrl: outsideBundlerUrl(config.bundler) };
  });
}

/** A devnet's manifest: what `dev` builds its chain configurations from. */
async function devnetTargets(dataDirFlag: string | undefined): Promise<DoctorTarget[]> {
  const dataDir = await serviceDataDir(dataDirFlag, 'the devnet').catch((e: Error) => {
    // serviceDataDir's message speaks of managing a store; here nothing was named to check.
    throw /^no running agent-wallet service/.test(e.message)
      ? new CliError('nothing to check: pass --config F (a cluster), --network N with its flags (a testnet), or --data-dir D (a devnet); with none, a running `dev`')
      : e;
  });
  const path = join(dataDir, 'devnet', 'manifest.json');
  let manifest;
  try {
    manifest = loadManifest(path);
  } catch (e) {
    throw new CliError(`cannot read the devnet manifest ${path}: ${(e as Error).message}`);
  }
  return chainConfigsFromManifest(manifest).map(doctorTarget);
}
