import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { DEFAULT_NAMESPACE } from '../../api/v1alpha1/names.ts';
import {
  BuiltinBundlerConfigSchema,
  BuiltinSponsorConfigSchema,
  Erc7677SponsorConfigSchema,
  builtinByDefault,
  ChainConfigObjectSchema,
  ChainConfigSchema,
  RpcBundlerConfigSchema,
  type ChainConfig,
} from '../../config/chainConfig.ts';
import { protocolsConfigSchema } from '../../protocols/config.ts';
import { FAMILIES } from '../../protocols/index.ts';
import { DEFAULT_WEBHOOK_SETTINGS, WebhookSettingsSchema } from '../../webhooks/settings.ts';
import { DEFAULT_PAYMENT_SETTINGS, PaymentSettingsSchema, X402_SETTLER_KEY_ENV } from '../../payments/settings.ts';
import type { ChainName } from '../../config/chains.ts';

/**
 * The cluster roles' configuration: one YAML file (the Helm chart renders it into a ConfigMap, mounted at
 * /etc/agent-wallet/config.yaml) plus secrets from the environment (Kubernetes Secret references; never in
 * the file):
 *
 *   AGENT_WALLET_SERVICE_SECRET        chain worker: derives wallet owner keys (>= 32 chars)
 *   AGENT_WALLET_PAYMASTER_SIGNER_KEY  chain worker: 0x… private key, the paymaster's verifyingSigner
 *   AGENT_WALLET_EXECUTOR_KEYS         chain worker, built-in bundler only: comma-separated 0x… private keys that send bundles
 *   AGENT_WALLET_BUNDLER_URL           chain worker, rpc bundler: its URL, when it is kept in a Secret (an API key in it)
 *   AGENT_WALLET_RPC_URL               chain worker, optional: its chain's RPC URL when it holds a provider
 *                                      API key and must not sit in the file (then the file may omit rpcUrl)
 *   AGENT_WALLET_FALLBACK_RPC_URLS     chain worker, optional: comma-separated fallback RPC URLs, for the same reason;
 *                                      when set, they replace the file's fallbackRpcUrls
 *   AGENT_WALLET_REDIS_PASSWORD        every role that uses Redis, when Redis has a password
 *   AGENT_WALLET_X402_SETTLER_KEY      chain worker, optional: the EOA that sends x402 settlements on its chain (the
 *                                      worker owns its nonces); set it with `x402.enabled: true` in the file
 *   AGENT_WALLET_FAUCET_KEY            chain worker, optional: the EOA the faucet's drips come from on its chain (the
 *                                      worker owns its nonces and caps each drip by the chain's faucetCap)
 *   POD_NAME / POD_NAMESPACE           downward API: leader-election identity, default namespace
 */

/** The chain worker's variable holding the faucet account's key (the faucet itself holds none). */
export const FAUCET_KEY_ENV = 'AGENT_WALLET_FAUCET_KEY';

/** A chain as the cluster sees it: the public part of ChainConfig (keys come from secrets) + its worker. */
export const ClusterChainSchema = ChainConfigObjectSchema.omit({ paymasterSignerKey: true, executorKeys: true, sendingAccounts: true }).extend({
  rpcUrl: ChainConfigObjectSchema.shape.rpcUrl.optional(),
  // An outside bundler's URL may come from the worker's Secret instead (AGENT_WALLET_BUNDLER_URL): a hosted one carries its API key.
  bundler: z.preprocess(
    builtinByDefault,
    z.discriminatedUnion('kind', [BuiltinBundlerConfigSchema, RpcBundlerConfigSchema.extend({ url: RpcBundlerConfigSchema.shape.url.optional() })]),
  ),
  // An ERC-7677 paymaster service's URL may come from the worker's Secret too (AGENT_WALLET_SPONSOR_URL).
  sponsor: z.preprocess(
    (v) => (v === undefined ? { kind: 'builtin' } : v),
    z.discriminatedUnion('kind', [BuiltinSponsorConfigSchema, Erc7677SponsorConfigSchema.extend({ url: Erc7677SponsorConfigSchema.shape.url.optional() })]),
  ),
  // Checked when the file is read, each family's section by its own schema: a typo fails the start, not a request.
  protocols: protocolsConfigSchema(FAMILIES).default({}),
  worker: z.object({
    /** host:port where the gateway and the controllers reach this chain's worker (a Service). */
    address: z.string().min(1),
    /** Port the worker's gRPC server listens on. */
    port: z.number().int().min(0).max(65535).default(50051),
  }),
});
export type ClusterChain = z.infer<typeof ClusterChainSchema>;

export const ClusterConfigSchema = z.object({
  /** Namespace of the ExecutionRequests, ApiClients, PaymentReceipts and the leader Lease. */
  namespace: z.string().optional(),
  redis: z.object({ url: z.string().min(1) }),
  gateway: z
    .object({
      port: z.number().int().min(0).max(65535).default(8080),
      host: z.string().default('0.0.0.0'),
      decisionTimeoutMs: z.number().int().positive().default(30_000),
      /**
       * Client connection timeouts and the per-address bound (src/http/connections.ts). Behind a proxy or an
       * ingress every client shares its address: set maxConnectionsPerAddress to 0 there (the proxy bounds them).
       */
      connections: z
        .object({
          headersTimeoutMs: z.number().int().positive(),
          requestTimeoutMs: z.number().int().positive(),
          keepAliveTimeoutMs: z.number().int().positive(),
          idleTimeoutMs: z.number().int().positive(),
          maxConnectionsPerAddress: z.number().int().min(0),
          lingerMs: z.number().int().min(0),
        })
        .partial()
        .strict()
        .optional(),
    })
    .default({ port: 8080, host: '0.0.0.0', decisionTimeoutMs: 30_000 }),
  controller: z
    .object({
      leaseName: z.string().default('agent-wallet-controller'),
      leaseDurationSeconds: z.number().int().positive().default(15),
      renewDeadlineSeconds: z.number().int().positive().default(10),
      retryPeriodSeconds: z.number().int().positive().default(2),
      admissionRetryMs: z.number().int().positive().default(10_000),
      /** Finished requests stay as resources this long, then are archived and deleted. */
      retentionSeconds: z.number().int().positive().default(3_600),
      /** How often budgeted AgentPolicies' spend is written to their status (kubectl's Spend column). */
      spendStatusSeconds: z.number().int().positive().default(5),
    })
    .default({
      leaseName: 'agent-wallet-controller',
      leaseDurationSeconds: 15,
      renewDeadlineSeconds: 10,
      retryPeriodSeconds: 2,
      admissionRetryMs: 10_000,
      retentionSeconds: 3_600,
      spendStatusSeconds: 5,
    }),
  /** Completion webhooks (the controller sends them; the gateway checks callback URLs): src/webhooks/settings.ts. */
  webhooks: WebhookSettingsSchema.default(DEFAULT_WEBHOOK_SETTINGS),
  /** Pricing of the manual and auto modes: src/payments/settings.ts. */
  payments: PaymentSettingsSchema.default({ ...DEFAULT_PAYMENT_SETTINGS, serviceAccounts: [] }),
  /**
   * x402: the gateway's 402s offer it and the controller verifies and settles through the chain workers, which hold
   * the settler key (AGENT_WALLET_X402_SETTLER_KEY in their environment). No role but the worker needs an rpcUrl.
   */
  x402: z.object({ enabled: z.boolean().default(false) }).default({ enabled: false }),
  /** Every role serves /metrics, /livez and /readyz here. */
  ops: z.object({ port: z.number().int().min(0).max(65535).default(9090) }).default({ port: 9090 }),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  chains: z.array(ClusterChainSchema).min(1),
});
export type ClusterConfig = z.infer<typeof ClusterConfigSchema>;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export async function loadClusterConfig(path: string): Promise<ClusterConfig> {
  let raw: unknown;
  try {
    raw = parseYaml(await readFile(path, 'utf8'));
  } catch (e) {
    throw new ConfigError(`cannot read config ${path}: ${(e as Error).message}`);
  }
  const parsed = ClusterConfigSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(`invalid config ${path}: ${z.prettifyError(parsed.error)}`);
  const names = parsed.data.chains.map((c) => c.name);
  if (new Set(names).size !== names.length) throw new ConfigError(`invalid config ${path}: a chain is listed twice`);
  return parsed.data;
}

export function clusterNamespace(config: ClusterConfig, env = process.env): string {
  return config.namespace ?? env.POD_NAMESPACE ?? DEFAULT_NAMESPACE;
}

export function clusterChain(config: ClusterConfig, name: ChainName): ClusterChain {
  const c = config.chains.find((x) => x.name === name);
  if (!c) throw new ConfigError(`chain ${name} is not in the config (configured: ${config.chains.map((x) => x.name).join(', ')})`);
  return c;
}

/** The full ChainConfig of the chain a worker serves: the file's public part + the keys from the environment. */
export function workerChainConfig(chain: ClusterChain, env = process.env): ChainConfig {
  const { worker: _worker, ...pub } = chain;
  const executorKeys = (env.AGENT_WALLET_EXECUTOR_KEYS ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter((k) => k !== '');
  const rpcUrl = env.AGENT_WALLET_RPC_URL || pub.rpcUrl;
  if (!rpcUrl) throw new ConfigError(`chain worker ${chain.name}: no RPC URL: set rpcUrl in the config or AGENT_WALLET_RPC_URL`);
  const fallbackFromEnv = (env.AGENT_WALLET_FALLBACK_RPC_URLS ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  const fallbackRpcUrls = fallbackFromEnv.length > 0 ? fallbackFromEnv : pub.fallbackRpcUrls;
  // The settler sends for x402 only, the faucet account drips only, apart from the executors that send bundles:
  // each its own Secret, its own nonces.
  const x402SettlerKey = env[X402_SETTLER_KEY_ENV]?.trim() || undefined;
  const faucetKey = env[FAUCET_KEY_ENV]?.trim() || undefined;
  const bundlerUrl = env.AGENT_WALLET_BUNDLER_URL?.trim() || undefined;
  const sponsorUrl = env.AGENT_WALLET_SPONSOR_URL?.trim() || undefined;
  const parsed = ChainConfigSchema.safeParse({
    ...pub,
    ...(pub.bundler?.kind === 'rpc' && { bundler: { ...pub.bundler, url: bundlerUrl ?? pub.bundler.url } }),
    ...(pub.sponsor?.kind === 'erc7677' && { sponsor: { ...pub.sponsor, url: sponsorUrl ?? pub.sponsor.url } }),
    rpcUrl,
    fallbackRpcUrls,
    paymasterSignerKey: env.AGENT_WALLET_PAYMASTER_SIGNER_KEY,
    executorKeys,
    sendingAccounts: { x402SettlerKey, faucetKey },
  });
  if (!parsed.success) {
    throw new ConfigError(
      `chain worker ${chain.name}: AGENT_WALLET_PAYMASTER_SIGNER_KEY, AGENT_WALLET_EXECUTOR_KEYS (the built-in bundler's only), ${X402_SETTLER_KEY_ENV} and ${FAUCET_KEY_ENV} must hold 0x-prefixed 32-byte keys, an rpc bundler needs its url (or AGENT_WALLET_BUNDLER_URL), an erc7677 sponsor its url (or AGENT_WALLET_SPONSOR_URL) and no signer key: ${z.prettifyError(parsed.error)}`,
    );
  }
  return parsed.data;
}
