import { z } from 'zod';
import { ChainNameSchema, type ChainName } from './chains.ts';

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/) as unknown as z.ZodType<`0x${string}`>;
const PrivateKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/) as unknown as z.ZodType<`0x${string}`>;
const WholeAmount = z.string().regex(/^(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$/, 'must be a decimal string, e.g. "100"');

/** The tokens a chain may configure: the payment stablecoins (spec §2.7) and WETH, which lending protocols take as collateral. */
export const TOKEN_SYMBOLS = ['USDC', 'USDT', 'aUSD', 'WETH'] as const;
export const TokenSymbolSchema = z.enum(TOKEN_SYMBOLS);
export type TokenSymbol = z.infer<typeof TokenSymbolSchema>;

export const TokenConfigSchema = z.object({
  symbol: TokenSymbolSchema,
  address: Address,
  decimals: z.number().int().min(0).max(36),
  /** Accepted for payment on this chain (spec §2.7: USDT only on ethereum, only when enabled). */
  acceptedForPayment: z.boolean().default(true),
  /**
   * The token's EIP-712 domain when it implements EIP-3009 (transferWithAuthorization): then a 402 offers it over
   * x402 too. What its `name()` and `version()` answer (Circle's USDC: version "2").
   */
  eip3009: z.object({ name: z.string().min(1), version: z.string().min(1) }).optional(),
});
export type TokenConfig = z.infer<typeof TokenConfigSchema>;

/** A USD amount as a decimal string ("1", "3000.5"): prices are compared exactly, never as floats. */
const UsdDecimal = z.string().regex(/^(0|[1-9][0-9]{0,17})(\.[0-9]{1,18})?$/, 'must be a decimal string, e.g. "3000.5"');

/**
 * Where one asset's USD price comes from (docs/policies.md, "Prices"): a fixed figure; an AggregatorV3 feed
 * (`latestRoundData` and `decimals`, its `updatedAt` bounded by `maxAgeSeconds`); or Aave v3's oracle
 * (`getAssetPrice` of `asset`, default the token itself, in its `BASE_CURRENCY_UNIT`, aged by its source feed's updatedAt).
 */
export const PriceSourceConfigSchema = z.union([
  z.object({ usd: UsdDecimal }).strict(),
  z.object({ feed: Address }).strict(),
  z.object({ aaveOracle: Address, asset: Address.optional() }).strict(),
]);
export type PriceSourceConfig = z.infer<typeof PriceSourceConfigSchema>;

/** A chain's price source for the policies' USD rules (src/policy/prices). */
export const PricesConfigSchema = z.object({
  /** A feed answer older than this (by its updatedAt) is no price: the asset is unpriced, never guessed. */
  maxAgeSeconds: z.number().int().positive().max(10 * 365 * 86_400).default(3_600),
  /** How long oracle answers are reused for further valuations on the chain. */
  cacheSeconds: z.number().min(0).max(60).default(5),
  /** The native coin; absent: `nativeUsdPrice` as a configured price. */
  native: PriceSourceConfigSchema.optional(),
  /** By token address or by the symbol of one of `tokens`; a token named nowhere is unpriced. */
  tokens: z.record(z.string().regex(/^(0x[0-9a-fA-F]{40}|[A-Za-z0-9]{1,16})$/), PriceSourceConfigSchema).default({}),
});
export type PricesConfig = z.infer<typeof PricesConfigSchema>;

/** A sponsorship's validity window: an operation not included by then can never be, and fails. */
const SponsorshipTtlSeconds = z.number().int().positive().default(600);

/** The built-in bundler: this worker builds and sends handleOps itself, from the chain's executor accounts. */
export const BuiltinBundlerConfigSchema = z.object({
  kind: z.literal('builtin'),
  maxOpsPerBundle: z.number().int().positive().default(32),
  /**
   * How long the bundler waits for more operations before sending a non-full bundle when none is in flight.
   * Default 0: a lone operation goes at once (its latency is the chain's); operations that arrive while a
   * bundle is in flight share the next one anyway (maxBusyWaitMs).
   */
  maxWaitMs: z.number().int().min(0).default(0),
  /**
   * While a bundle is in flight, how long a non-full bundle may wait for it (after its oldest operation
   * arrived) before it is sent anyway from another executor: fuller bundles at a bounded latency cost.
   */
  maxBusyWaitMs: z.number().int().min(0).default(100),
  sponsorshipTtlSeconds: SponsorshipTtlSeconds,
  /** eth_sendRawTransactionSync (anvil and some L2s) instead of send + receipt polling. */
  syncSend: z.boolean().default(false),
  receiptPollMs: z.number().int().positive().default(250),
});

/**
 * An ERC-4337 bundler over JSON-RPC (eth_sendUserOperation, eth_estimateUserOperationGas,
 * eth_getUserOperationReceipt, eth_getUserOperationByHash; pimlico_getUserOperationGasPrice where it answers).
 */
export const RpcBundlerConfigSchema = z.object({
  kind: z.literal('rpc'),
  /** The bundler's JSON-RPC URL; it may carry an API key (only its origin is ever logged). */
  url: z.string().url(),
  sponsorshipTtlSeconds: SponsorshipTtlSeconds,
  /** How often the receipts of operations handed to the bundler are asked for. */
  receiptPollMs: z.number().int().positive().default(250),
  /**
   * How long an operation may go without a receipt before the bundler is asked whether it still holds it
   * (eth_getUserOperationByHash): one it no longer knows (a restart emptied its mempool) is sent again.
   */
  recheckAfterMs: z.number().int().positive().default(5_000),
  /**
   * Operations of one wallet handed to the bundler before the earlier ones are included. Most bundlers refuse a
   * nonce above the chain's by default (Alto: `--mempool-max-queued-ops 0`), so 1 sends a wallet's operations one
   * at a time; raise it to what the bundler accepts.
   */
  maxInFlightPerSender: z.number().int().min(1).max(64).default(1),
  /**
   * The most the bundler may ask, as multiples of the service's own figures, before an operation is refused rather
   * than signed: its preVerificationGas against the service's estimate (L1 data fee included), and its gas price
   * against the node's fees. Both are paid from the paymaster's deposit: a bundler asking a hundred times over
   * would drain it.
   */
  maxPreVerificationGasRatio: z.number().min(1).max(100).default(5),
  maxGasPriceRatio: z.number().min(1).max(100).default(3),
});

/** `bundler: {}` (or none) is the built-in bundler with its defaults, as before there was a choice. */
export const builtinByDefault = (v: unknown): unknown =>
  v === undefined ? { kind: 'builtin' } : typeof v === 'object' && v !== null && !('kind' in v) ? { kind: 'builtin', ...v } : v;

export const BundlerConfigSchema = z.preprocess(builtinByDefault, z.discriminatedUnion('kind', [BuiltinBundlerConfigSchema, RpcBundlerConfigSchema]));
export type BundlerConfig = z.infer<typeof BundlerConfigSchema>;
export type BuiltinBundlerConfig = z.infer<typeof BuiltinBundlerConfigSchema>;
export type RpcBundlerConfig = z.infer<typeof RpcBundlerConfigSchema>;

/** The built-in bundler's settings of a chain that must use it (benchmarks and tests that tune it). */
export function builtinBundlerOf(c: { name: string; bundler: BundlerConfig }): BuiltinBundlerConfig {
  if (c.bundler.kind !== 'builtin') throw new Error(`${c.name} uses an RPC bundler, not the built-in one`);
  return c.bundler;
}

/** `c` with its built-in bundler's settings changed (tests). */
export function withBuiltinBundler<C extends { name: string; bundler: BundlerConfig }>(c: C, patch: Partial<Omit<BuiltinBundlerConfig, 'kind'>>): C {
  return { ...c, bundler: { ...builtinBundlerOf(c), ...patch } };
}
/**
 * Who sponsors the chain's operations (src/chain/sponsor): the built-in VerifyingPaymaster signer (`builtin`, the
 * default: `paymasterSignerKey` signs for `paymaster`), or an ERC-7677 paymaster service (`erc7677`: its
 * pm_getPaymasterStubData / pm_getPaymasterData answers name `paymaster`, and the service holds no paymaster key).
 */
export const BuiltinSponsorConfigSchema = z.object({ kind: z.literal('builtin') }).strict();
export const Erc7677SponsorConfigSchema = z
  .object({
    kind: z.literal('erc7677'),
    /** The paymaster service's JSON-RPC URL; it may carry an API key (only its origin is ever logged). */
    url: z.string().url(),
    /** The ERC-7677 `context` sent with every request (the provider's policy id and the like); absent: `{}`. */
    context: z.record(z.string(), z.unknown()).optional(),
    timeoutMs: z.number().int().positive().default(10_000),
  })
  .strict();
export const SponsorConfigSchema = z.preprocess(
  (v) => (v === undefined ? { kind: 'builtin' } : v),
  z.discriminatedUnion('kind', [BuiltinSponsorConfigSchema, Erc7677SponsorConfigSchema]),
);
export type SponsorConfig = z.infer<typeof SponsorConfigSchema>;
export type Erc7677SponsorConfig = z.infer<typeof Erc7677SponsorConfigSchema>;

/** OP-stack's GasPriceOracle predeploy and Arbitrum's NodeInterface: the same address on every such chain. */
export const OP_STACK_GAS_PRICE_ORACLE = '0x420000000000000000000000000000000000000F';
export const ARBITRUM_NODE_INTERFACE = '0x00000000000000000000000000000000000000C8';

/**
 * How an L2 charges for the data its transactions post to L1, which preVerificationGas must cover
 * (src/chain/l1DataFee.ts, docs/architecture.md "L2 data fees"): `none` (an L1), `opStack` (the GasPriceOracle's
 * fee in wei, deducted apart from gas) or `arbitrum` (the NodeInterface's estimate in gas, charged as gas).
 */
export const L1DataFeeConfigSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('none') }).strict(),
  z
    .object({
      kind: z.literal('opStack'),
      gasPriceOracle: Address.default(OP_STACK_GAS_PRICE_ORACLE),
      /**
       * `getL1Fee` of the signed transaction (what Alto asks; since Fjord the oracle compresses it with FastLZ), or
       * Fjord's `getL1FeeUpperBound` of its unsigned size: never below the fee charged, on any content.
       */
      method: z.enum(['getL1Fee', 'getL1FeeUpperBound']).default('getL1Fee'),
    })
    .strict(),
  z.object({ kind: z.literal('arbitrum'), nodeInterface: Address.default(ARBITRUM_NODE_INTERFACE) }).strict(),
]);
export type L1DataFeeConfig = z.infer<typeof L1DataFeeConfigSchema>;

/** What each chain name stands for (Base Sepolia is OP-stack, Arbitrum Sepolia is Nitro): the default when unset. */
const DEFAULT_L1_DATA_FEE: Readonly<Record<ChainName, L1DataFeeConfig>> = {
  ethereum: { kind: 'none' },
  base: { kind: 'opStack', gasPriceOracle: OP_STACK_GAS_PRICE_ORACLE, method: 'getL1Fee' },
  arbitrum: { kind: 'arbitrum', nodeInterface: ARBITRUM_NODE_INTERFACE },
};

/** A chain's L1 data fee setting: its own, else the default of the network its name stands for. */
export const l1DataFeeOf = (c: Pick<ChainConfig, 'name' | 'l1DataFee'>): L1DataFeeConfig => c.l1DataFee ?? DEFAULT_L1_DATA_FEE[c.name];

/**
 * Everything a chain worker needs to serve one chain. Produced from the devnet manifest in the embedded
 * mode, or read from YAML (validated by this schema) in a cluster. Private keys here come from secrets.
 */
export const ChainConfigObjectSchema = z.object({
  name: ChainNameSchema,
  chainId: z.number().int().positive(),
  /** The primary RPC endpoint: every call goes here while it answers. */
  rpcUrl: z.string().url(),
  /**
   * Further endpoints of the same chain, tried in order when the primary fails or rate-limits (src/chain/rpcTransport.ts;
   * docs/operations.md, "RPC endpoints"). Each must serve `chainId`: a hosted provider's URL may carry its API key.
   */
  fallbackRpcUrls: z.array(z.string().url()).max(8).default([]),
  entryPoint: Address,
  simpleAccountFactory: Address,
  /**
   * The paymaster that sponsors the chain's operations: the built-in signer's VerifyingPaymaster, or the one an
   * ERC-7677 service signs for (its answers must name it: the doctor checks its deposit and stake).
   */
  paymaster: Address,
  /**
   * Signs VerifyingPaymaster sponsorships; must be the paymaster's `verifyingSigner`. Required with
   * `sponsor.kind: builtin`, refused with `erc7677` (the paymaster service holds its own key).
   */
  paymasterSignerKey: PrivateKey.optional(),
  /**
   * Executor EOAs that send handleOps bundles, one bundle in flight per key: the built-in bundler's accounts, so
   * required (at least one) with `bundler.kind: builtin` and refused with `rpc`, whose bundler sends with its own.
   */
  executorKeys: z.array(PrivateKey).default([]),
  /**
   * The service's own sending accounts, apart from the bundle executors: the chain worker owns their nonces and
   * sends from them for named purposes only (chain/worker/accountSender.ts). Each needs native coin for gas.
   */
  sendingAccounts: z
    .object({
      /** Sends x402 settlements (transferWithAuthorization); without it, x402 is not offered on this chain. */
      x402SettlerKey: PrivateKey.optional(),
      /** Sends the faucet's drips (faucetTransfer, within faucetCap); without it, the faucet cannot serve this chain. */
      faucetKey: PrivateKey.optional(),
    })
    .default({}),
  /**
   * The most one faucet transfer may move, per asset, in whole units as decimal strings ("100", "0.05"): the worker
   * refuses more whatever the faucet asks, so a faucet gone wrong (or its caller) cannot empty the account in one
   * drip. An asset not named here is never sent by the faucet.
   */
  faucetCap: z
    .object({
      /** The chain's native coin (18 decimals). */
      native: WholeAmount.optional(),
      /** Per token symbol of `tokens`. */
      tokens: z.partialRecord(TokenSymbolSchema, WholeAmount).default({}),
    })
    .default({ tokens: {} }),
  /** Receives the bundles' gas refunds (EntryPoint `beneficiary`). */
  beneficiary: Address,
  treasury: Address,
  tokens: z.array(TokenConfigSchema),
  /**
   * Confirmations an inclusion needs before its request is `confirmed` (its block counts as one): until then a
   * reorg can still remove it, and the controller keeps watching. 1 on the devnet, which never reorgs by itself.
   */
  confirmations: z.number().int().min(1).max(1_000).default(1),
  /** Confirmations a payment transaction needs before a proof of it is accepted (spec §4.2 rule 2). */
  paymentConfirmations: z.number().int().min(1).max(1_000).default(1),
  /**
   * The DeFi protocols served on this chain (the `/protocols/...` families): addresses and markets, one section per
   * family. Each family validates its own section (src/protocols/config.ts): this layer sits below them.
   */
  protocols: z.record(z.string(), z.unknown()).default({}),
  /** USD per native coin, for cost figures (testnet: a configured constant, not a price feed). */
  nativeUsdPrice: z.number().positive().default(3000),
  /** The USD prices of the native coin and tokens the policies' outflow valuations read (src/policy/prices). */
  prices: PricesConfigSchema.default({ maxAgeSeconds: 3_600, cacheSeconds: 5, tokens: {} }),
  /** The L1 data fee preVerificationGas covers; absent: by the chain's name (l1DataFeeOf). */
  l1DataFee: L1DataFeeConfigSchema.optional(),
  /**
   * Who bundles the chain's operations: the built-in bundler (`builtin`, the default: it sends handleOps from
   * `executorKeys`) or an ERC-4337 bundler over JSON-RPC (`rpc`: Alto, a hosted bundler), which sends with its own
   * accounts. src/chain/bundler/README.md.
   */
  bundler: BundlerConfigSchema,
  /** Who signs the sponsorships: the built-in paymaster signer (default) or an ERC-7677 paymaster service. */
  sponsor: SponsorConfigSchema,
});

/**
 * A chain's configuration, its executor keys checked against its bundler: the built-in one sends from them, an
 * outside one from its own accounts. (ChainConfigObjectSchema is the same without the check, for `.omit`.)
 */
export const ChainConfigSchema = ChainConfigObjectSchema.superRefine((c, ctx) => {
  if (c.bundler.kind === 'builtin' && c.executorKeys.length === 0) {
    ctx.addIssue({ code: 'custom', path: ['executorKeys'], message: 'the built-in bundler needs at least one executor key' });
  }
  if (c.bundler.kind === 'rpc' && c.executorKeys.length > 0) {
    ctx.addIssue({ code: 'custom', path: ['executorKeys'], message: 'an RPC bundler sends with its own accounts: executor keys belong to the built-in bundler only' });
  }
  if (c.sponsor.kind === 'builtin' && c.paymasterSignerKey === undefined) {
    ctx.addIssue({ code: 'custom', path: ['paymasterSignerKey'], message: 'the built-in sponsor needs the paymaster signer key' });
  }
  if (c.sponsor.kind === 'erc7677' && c.paymasterSignerKey !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['paymasterSignerKey'], message: 'an ERC-7677 paymaster service signs with its own key: the paymaster signer key belongs to the built-in sponsor only' });
  }
});
export type ChainConfig = z.infer<typeof ChainConfigSchema>;

/** The token configuration of each chain, as the gateway reports balances with it. */
export function tokensByChain(chains: readonly Pick<ChainConfig, 'name' | 'tokens'>[]): Partial<Record<ChainName, readonly TokenConfig[]>> {
  return Object.fromEntries(chains.map((c) => [c.name, c.tokens]));
}

/** Each chain's configured USD price of its native coin, by name: what budgets value gas and native value at. */
export function nativeUsdPriceOf(chains: readonly Pick<ChainConfig, 'name' | 'nativeUsdPrice'>[]): (chain: ChainName) => number | undefined {
  const prices = new Map(chains.map((c) => [c.name, c.nativeUsdPrice]));
  return (chain) => prices.get(chain);
}
