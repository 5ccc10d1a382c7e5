import { readFile } from 'node:fs/promises';
import { parseUnits, type Address } from 'viem';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ChainNameSchema, type ChainName } from '../config/chains.ts';
import { DEVNET_FAUCET_FUNDED_INDEX } from '../devnet/devnet.ts';
import type { DevnetManifest } from '../devnet/manifest.ts';
import type { RateLimit } from '../ratelimit/index.ts';

/**
 * The faucet's configuration, from either source:
 * - the devnet (`agent-wallet faucet-server --data-dir D`, and `npm start`): `<D>/devnet/manifest.json` gives the
 *   chains and their aUSD (faucetSettingsFromManifest);
 * - a deployment: a YAML file (FaucetConfigSchema), each chain naming its chain worker's gRPC address. The faucet
 *   holds no key and no RPC URL: each chain's worker sends the drips from its faucet account (the worker's
 *   AGENT_WALLET_FAUCET_KEY) and owns that account's nonces. From the environment only:
 *
 *   AGENT_WALLET_REDIS_PASSWORD          when the limits are kept in a Redis that has a password
 */

/** One drip limit as people think of it: `burst` drips at once after a quiet spell, then one every `everySeconds`. */
export const DripLimitSchema = z.object({
  burst: z.number().int().positive(),
  everySeconds: z.number().positive(),
});
export type DripLimitConfig = z.infer<typeof DripLimitSchema>;

export const DEFAULT_LIMITS = {
  /** Per smart-wallet address and chain. */
  perAddress: { burst: 3, everySeconds: 3_600 },
  /** Per client address (IPv4 address, or IPv6 /64) over every address and chain it asks for. */
  perClient: { burst: 10, everySeconds: 360 },
} as const satisfies Record<string, DripLimitConfig>;

/** Whole aUSD per drip, as a decimal string ("100", "2.5"). */
export const DEFAULT_AMOUNT = '100';

const HexAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address') as unknown as z.ZodType<Address>;

export const FaucetChainConfigSchema = z.strictObject({
  name: ChainNameSchema,
  chainId: z.number().int().positive(),
  /** host:port of the chain's worker (its gRPC Service in a cluster): it sends the drips and answers the reads. */
  chainWorker: z.string().min(1),
  /** The aUSD contract on this chain (spec §2.7: 6 decimals on the hosted testnets). */
  token: z.object({ address: HexAddress, decimals: z.number().int().min(0).max(36).default(6) }),
  /** A block explorer: the page links each drip's transaction as `<explorerUrl>/tx/<hash>`. */
  explorerUrl: z.string().url().optional(),
});

export const FaucetConfigSchema = z.object({
  port: z.number().int().min(0).max(65535).default(8090),
  host: z.string().default('0.0.0.0'),
  /**
   * Behind an ingress or load balancer the client address is in X-Forwarded-For: name the proxies' addresses
   * or CIDRs ("10.0.0.0/8, 127.0.0.1"), or `true` to trust any. Leave it false when clients connect directly:
   * they could forge the header and escape the per-client limit.
   */
  trustProxy: z.union([z.boolean(), z.string().min(1)]).default(false),
  amount: z
    .string()
    .regex(/^(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/, 'must be a decimal string, e.g. "100"')
    .refine((v) => /[1-9]/.test(v), 'must be more than 0')
    .default(DEFAULT_AMOUNT),
  limits: z
    .object({ perAddress: DripLimitSchema.default(DEFAULT_LIMITS.perAddress), perClient: DripLimitSchema.default(DEFAULT_LIMITS.perClient) })
    .default(DEFAULT_LIMITS),
  /** How long a drip waits for its transaction's receipt before it answers 503 receipt_timeout (with the hash). */
  receiptTimeoutSeconds: z.number().positive().default(60),
  receiptPollMs: z.number().int().positive().default(1_000),
  /** Keep the limits in Redis: they then survive a restart of the faucet. */
  redis: z.object({ url: z.string().min(1) }).optional(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  chains: z.array(FaucetChainConfigSchema).min(1),
  /** The service's own accounts (every chain's treasury, the executors, the x402 settler): never sent to. */
  serviceAccounts: z.array(HexAddress).default([]),
});
export type FaucetConfig = z.infer<typeof FaucetConfigSchema>;

/** One chain as the faucet serves it. */
export interface FaucetChain {
  name: ChainName;
  chainId: number;
  /** A deployment's: the chain worker's gRPC address. The devnet's faucet is given its workers in process. */
  chainWorker?: string;
  token: { address: Address; decimals: number };
  /** What one drip sends, in the token's smallest unit. */
  amountRaw: bigint;
  explorerUrl?: string;
}

/** What the faucet runs with, whichever source it came from. */
export interface FaucetSettings {
  /** In the order the page lists them. */
  chains: FaucetChain[];
  /** Whole aUSD per drip, as configured ("100"). */
  amount: string;
  limits: { perAddress: DripLimitConfig; perClient: DripLimitConfig };
  receiptTimeoutMs: number;
  receiptPollMs: number;
  /**
   * Addresses a drip is refused to (400 address_not_allowed): the service's own accounts, every chain's
   * treasury first. A drip to the treasury once passed for an execution's payment; and the service's sending
   * accounts are the operator's to fund. The faucet's own address is refused too, without being listed.
   */
  serviceAccounts: readonly Address[];
}

export class FaucetConfigError extends Error {
  override readonly name = 'FaucetConfigError';
}

/** A token bucket (src/ratelimit) from a limit as configured. */
export function rateLimitOf(limit: DripLimitConfig): RateLimit {
  return { burst: limit.burst, requestsPerSecond: 1 / limit.everySeconds };
}

/** `amount` whole tokens in the smallest unit; more decimals than the token has is an error, not a rounding. */
function amountRaw(amount: string, decimals: number, where: string): bigint {
  const fraction = amount.split('.')[1] ?? '';
  if (fraction.length > decimals) throw new FaucetConfigError(`amount ${amount} has more decimals than ${where}'s token (${decimals})`);
  return parseUnits(amount, decimals);
}

/**
 * The devnet account the faucet sends from: its own role (src/devnet/accounts.ts), holding every test token,
 * so the faucet's nonces never race a test's or another role's. Manifests written before that role existed:
 * funded[4], which no test transfers from. The chain workers hold its key (chainConfigsFromManifest).
 */
export const DEVNET_FAUCET_ACCOUNT = DEVNET_FAUCET_FUNDED_INDEX;

/**
 * The accounts of the devnet the embedded service (`agent-wallet dev`) uses: each chain's treasury, the executors,
 * the paymaster's signer, the x402 settler and the faucet (the last two absent from older manifests).
 */
function devnetServiceAccounts(manifest: DevnetManifest): Address[] {
  const { executors, paymasterSigner, settler, faucet } = manifest.accounts;
  const senders = [...executors, paymasterSigner, settler, faucet].flatMap((a) => (a ? [a.address] : []));
  return [...manifest.chains.map((c) => c.treasury), ...senders];
}

/** The devnet's faucet: every chain of the manifest and its aUSD; receipts polled quickly. */
export function faucetSettingsFromManifest(
  manifest: DevnetManifest,
  overrides: Partial<Pick<FaucetSettings, 'amount' | 'limits' | 'receiptTimeoutMs'>> = {},
): FaucetSettings {
  const amount = overrides.amount ?? DEFAULT_AMOUNT;
  const chains = manifest.chains.map((c): FaucetChain => {
    const token = c.tokens.find((t) => t.symbol === 'aUSD');
    if (!token) throw new FaucetConfigError(`the devnet manifest has no aUSD on ${c.name}`);
    return {
      name: c.name,
      chainId: c.chainId,
      token: { address: token.address, decimals: token.decimals },
      amountRaw: amountRaw(amount, token.decimals, c.name),
    };
  });
  return {
    chains,
    amount,
    limits: overrides.limits ?? DEFAULT_LIMITS,
    // anvil mines each transaction at once: a receipt missing after 10 s means the node is in trouble.
    receiptTimeoutMs: overrides.receiptTimeoutMs ?? 10_000,
    receiptPollMs: 20,
    serviceAccounts: devnetServiceAccounts(manifest),
  };
}

/** The settings of a deployment: the validated file (the key and the RPC URLs are the chain workers'). */
export function faucetSettingsFromConfig(config: FaucetConfig): FaucetSettings {
  const names = config.chains.map((c) => c.name);
  if (new Set(names).size !== names.length) throw new FaucetConfigError('a chain is listed twice');
  const chains = config.chains.map(
    (c): FaucetChain => ({
      name: c.name,
      chainId: c.chainId,
      chainWorker: c.chainWorker,
      token: c.token,
      amountRaw: amountRaw(config.amount, c.token.decimals, c.name),
      explorerUrl: c.explorerUrl?.replace(/\/+$/, ''),
    }),
  );
  return {
    chains,
    amount: config.amount,
    limits: config.limits,
    receiptTimeoutMs: config.receiptTimeoutSeconds * 1000,
    receiptPollMs: config.receiptPollMs,
    serviceAccounts: config.serviceAccounts,
  };
}

/** Reads and validates the YAML file; the errors name the file and the offending fields. */
export async function loadFaucetConfig(path: string): Promise<FaucetConfig> {
  let raw: unknown;
  try {
    raw = parseYaml(await readFile(path, 'utf8'));
  } catch (e) {
    throw new FaucetConfigError(`cannot read faucet config ${path}: ${(e as Error).message}`);
  }
  const parsed = FaucetConfigSchema.safeParse(raw);
  if (!parsed.success) throw new FaucetConfigError(`invalid faucet config ${path}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
