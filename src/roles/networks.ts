import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ChainConfigSchema, type ChainConfig } from '../config/chainConfig.ts';
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

/** What the operator adds to a shipped network: its own contracts and accounts, and the keys (never in a file). */
export interface NetworkOperatorInputs {
  rpcUrl: string;
  paymaster: string;
  beneficiary: string;
  treasury: string;
  paymasterSignerKey: string | undefined;
  executorKeys: readonly string[];
  x402SettlerKey?: string | undefined;
  faucetKey?: string | undefined;
}

/**
 * The ChainConfig of a shipped network with the operator's inputs: what `serve --network` runs and
 * `doctor --network` checks. Every field is validated as the service validates it, the protocols by their
 * families' schemas; a missing input is named with the flag or variable that gives it.
 */
export function networkChainConfig(name: NetworkName, inputs: NetworkOperatorInputs, dir = NETWORKS_DIR): ChainConfig {
  const shipped = readNetworkFile(name, dir);
  const protocols = protocolsConfigSchema(FAMILIES).safeParse(shipped.protocols ?? {});
  if (!protocols.success) throw new CliError(`networks/${name}.yaml: protocols: ${z.prettifyError(protocols.error)}`);
  const parsed = ChainConfigSchema.safeParse({
    ...shipped,
    protocols: protocols.data,
    rpcUrl: inputs.rpcUrl,
    paymaster: inputs.paymaster,
    beneficiary: inputs.beneficiary,
    treasury: inputs.treasury,
    paymasterSignerKey: inputs.paymasterSignerKey,
    executorKeys: inputs.executorKeys,
    sendingAccounts: { x402SettlerKey: inputs.x402SettlerKey, faucetKey: inputs.faucetKey },
  });
  if (!parsed.success) throw new CliError(`network ${name}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
