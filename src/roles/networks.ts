import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ChainConfigObjectSchema, ChainConfigSchema, type ChainConfig } from '../config/chainConfig.ts';
import type { ChainName } from '../config/chains.ts';
import { protocolsConfigSchema } from '../protocols/config.ts';
import { FAMILIES } from '../protocols/index.ts';
import { CliError } from '../lib/args.ts';

/**
 * The public testnets this repository ships chain configurations for (networks/<name>.yaml): each one chain's
 * entry of the cluster config without what only its operator has (RPC URL, paymaster, beneficiary, treasury, keys).
 * The Helm chart merges the same files under a chain's values (`chains.<chain>.network`).
 */
export const NETWORKS = { sepolia: 'ethereum', 'base-sepolia': 'base', 'arbitrum-sepolia': 'arbitrum' } as const satisfies Record<string, ChainName>;
export type NetworkName = keyof typeof NETWORKS;

export const NETWORKS_DIR = resolve(import.meta.dirname, '../../networks');

export const isNetworkName = (s: string): s is NetworkName => Object.hasOwn(NETWORKS, s);

/** A shipped network file as written: validated for its shape when it is used (networkChainConfig). */
export function readNetworkFile(name: NetworkName, dir = NETWORKS_DIR): Record<string, unknown> {
  return parseYaml(readFileSync(resolve(dir, `${name}.yaml`), 'utf8')) as Record<string, unknown>;
}

/** What the operator adds to a shipped network: its own RPC endpoint, contracts and accounts. */
export interface NetworkOperatorInputs {
  rpcUrl: string | undefined;
  paymaster: string | undefined;
  beneficiary: string | undefined;
  treasury: string | undefined;
  /** An outside ERC-4337 bundler's JSON-RPC URL (`--bundler-url`): the chain's bundler is then `rpc`, with no executors. */
  bundlerUrl?: string | undefined;
  /** An ERC-7677 paymaster service's URL (`--sponsor-url`): the chain is then sponsored by it, with no signer key here. */
  sponsorUrl?: string | undefined;
}

/** The keys, never in a file: from the environment (the same variables as a cluster's chain worker). */
export interface NetworkKeys {
  paymasterSignerKey: string | undefined;
  executorKeys: readonly string[];
  x402SettlerKey?: string | undefined;
  faucetKey?: string | undefined;
}

const PublicChainSchema = ChainConfigObjectSchema.omit({ paymasterSignerKey: true, executorKeys: true, sendingAccounts: true });
export type PublicChainConfig = z.infer<typeof PublicChainSchema>;

/**
 * A shipped network with the operator's inputs, without keys: what `doctor --network` checks. Validated as the
 * service validates it, the protocols by their families' schemas; a missing input is named by its field.
 */
export function networkPublicConfig(name: NetworkName, inputs: NetworkOperatorInputs, dir = NETWORKS_DIR): PublicChainConfig {
  const flags = { rpcUrl: '--rpc-url', paymaster: '--paymaster', beneficiary: '--beneficiary', treasury: '--treasury' } as const;
  const missing = (Object.keys(flags) as (keyof typeof flags)[]).filter((k) => !inputs[k]).map((k) => flags[k]);
  if (missing.length > 0) throw new CliError(`network ${name} needs ${missing.join(', ')}`);
  const shipped = readNetworkFile(name, dir);
  const protocols = protocolsConfigSchema(FAMILIES).safeParse(shipped.protocols ?? {});
  if (!protocols.success) throw new CliError(`networks/${name}.yaml: protocols: ${z.prettifyError(protocols.error)}`);
  const { bundlerUrl, sponsorUrl, ...rest } = inputs;
  const bundler = bundlerUrl !== undefined ? { ...(shipped.bundler as object | undefined), kind: 'rpc', url: bundlerUrl } : shipped.bundler;
  const parsed = PublicChainSchema.safeParse({
    ...shipped,
    protocols: protocols.data,
    ...rest,
    ...(bundler !== undefined && { bundler }),
    ...(sponsorUrl !== undefined && { sponsor: { kind: 'erc7677', url: sponsorUrl } }),
  });
  if (!parsed.success) throw new CliError(`network ${name}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** The full ChainConfig of a shipped network: what `serve --network` runs. */
export function networkChainConfig(name: NetworkName, inputs: NetworkOperatorInputs, keys: NetworkKeys, dir = NETWORKS_DIR): ChainConfig {
  const parsed = ChainConfigSchema.safeParse({
    ...networkPublicConfig(name, inputs, dir),
    paymasterSignerKey: keys.paymasterSignerKey,
    executorKeys: keys.executorKeys,
    sendingAccounts: { x402SettlerKey: keys.x402SettlerKey, faucetKey: keys.faucetKey },
  });
  if (!parsed.success) throw new CliError(`network ${name}: the keys (${KEY_ENV.paymasterSignerKey}, ${KEY_ENV.executorKeys}…): ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** The environment variables of the keys: a cluster's chain worker reads the same (src/roles/cluster/config.ts). */
export const KEY_ENV = {
  paymasterSignerKey: 'AGENT_WALLET_PAYMASTER_SIGNER_KEY',
  executorKeys: 'AGENT_WALLET_EXECUTOR_KEYS',
  x402SettlerKey: 'AGENT_WALLET_X402_SETTLER_KEY',
  faucetKey: 'AGENT_WALLET_FAUCET_KEY',
} as const;

/** The keys in the environment; absent ones are undefined (empty executors). */
export function keysFromEnv(env: NodeJS.ProcessEnv = process.env): NetworkKeys {
  const value = (name: string) => env[name]?.trim() || undefined;
  return {
    paymasterSignerKey: value(KEY_ENV.paymasterSignerKey),
    executorKeys: (env[KEY_ENV.executorKeys] ?? '').split(',').map((k) => k.trim()).filter((k) => k !== ''),
    x402SettlerKey: value(KEY_ENV.x402SettlerKey),
    faucetKey: value(KEY_ENV.faucetKey),
  };
}

/** The command-line options that name networks and the operator's inputs, shared by `serve` and `doctor`. */
export const NETWORK_OPTIONS = {
  network: { type: 'string', multiple: true },
  'rpc-url': { type: 'string', multiple: true },
  paymaster: { type: 'string', multiple: true },
  beneficiary: { type: 'string', multiple: true },
  treasury: { type: 'string', multiple: true },
  'bundler-url': { type: 'string', multiple: true },
  'sponsor-url': { type: 'string', multiple: true },
} as const;

export interface NetworkOptionValues {
  network?: string[] | undefined;
  'rpc-url'?: string[] | undefined;
  paymaster?: string[] | undefined;
  beneficiary?: string[] | undefined;
  treasury?: string[] | undefined;
  'bundler-url'?: string[] | undefined;
  'sponsor-url'?: string[] | undefined;
}

/** The networks the options name, each with its operator inputs. `fallbackBeneficiary` fills an unset beneficiary. */
export function networkInputs(values: NetworkOptionValues, fallbackBeneficiary?: string): { name: NetworkName; inputs: NetworkOperatorInputs }[] {
  const names = values.network ?? [];
  for (const n of names) if (!isNetworkName(n)) throw new CliError(`unknown --network ${n}: one of ${Object.keys(NETWORKS).join(', ')}`);
  const networks = [...new Set(names)] as NetworkName[];
  const pick = (flag: keyof NetworkOptionValues, name: NetworkName): string | undefined => {
    let value: string | undefined;
    for (const v of values[flag] ?? []) {
      // `name=value` for one network (by its name or its chain's); a bare value for all. A URL's query may hold `=`.
      const keyed = /^([a-z-]+)=(.*)$/.exec(v);
      const key = keyed?.[1];
      if (key !== undefined && (isNetworkName(key) || Object.values(NETWORKS).includes(key as never))) {
        if (key === name || key === NETWORKS[name]) value = keyed![2];
      } else value ??= v;
    }
    return value;
  };
  return networks.map((name) => {
    const bundlerUrl = pick('bundler-url', name);
    const sponsorUrl = pick('sponsor-url', name);
    const treasury = pick('treasury', name);
    // An outside bundler pays its own beneficiary: the built-in one's is then never used (the treasury stands in).
    const beneficiary = pick('beneficiary', name) ?? (bundlerUrl !== undefined ? treasury : fallbackBeneficiary);
    return { name, inputs: { rpcUrl: pick('rpc-url', name), paymaster: pick('paymaster', name), beneficiary, treasury, ...(bundlerUrl !== undefined && { bundlerUrl }), ...(sponsorUrl !== undefined && { sponsorUrl }) } };
  });
}
