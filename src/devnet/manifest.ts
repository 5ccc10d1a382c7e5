import { z } from 'zod';
import { ChainNameSchema } from '../config/chains.ts';
import { L1DataFeeConfigSchema, TokenConfigSchema } from '../config/chainConfig.ts';
import { protocolsConfigSchema } from '../protocols/config.ts';
import { FAMILIES } from '../protocols/index.ts';

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/) as unknown as z.ZodType<`0x${string}`>;
const PrivateKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/) as unknown as z.ZodType<`0x${string}`>;
const Account = z.object({ address: Address, privateKey: PrivateKey });

/**
 * What the devnet wrote at start (`<data-dir>/devnet/manifest.json`): enough for the service, the CLI and the
 * tests to reach every chain and contract. The keys are anvil's public test keys: devnet only.
 */
export const DevnetChainSchema = z.object({
  name: ChainNameSchema,
  chainId: z.number().int(),
  rpcUrl: z.string().url(),
  entryPoint: Address,
  simpleAccountFactory: Address,
  accountImplementation: Address,
  paymaster: Address,
  treasury: Address,
  tokens: z.array(TokenConfigSchema),
  /** Contracts the tests and examples call: a Counter and a Gate (see contracts/). */
  testContracts: z.object({ counter: Address, gate: Address }),
  /**
   * The DeFi protocols deployed on this chain (src/devnet/protocols), in the chain configuration's own shape
   * (each family's config.ts). Optional: manifests before them lack it.
   */
  protocols: protocolsConfigSchema(FAMILIES).optional(),
  /** The node answers `eth_sendRawTransactionSync` (probed at start). Optional: manifests before it lack it. */
  syncSend: z.boolean().optional(),
  /** The L1 data fee the chain stands for, its oracle's stand-in installed (l1DataFee.ts). Optional, as above. */
  l1DataFee: L1DataFeeConfigSchema.optional(),
});
export type DevnetChain = z.infer<typeof DevnetChainSchema>;

export const DevnetManifestSchema = z.object({
  version: z.literal(1),
  createdAt: z.string(),
  /** True when this start deployed the contracts (empty or lost chain state), false when state was reloaded. */
  fresh: z.boolean(),
  chains: z.array(DevnetChainSchema),
  accounts: z.object({
    deployer: Account,
    paymasterSigner: Account,
    executors: z.array(Account),
    /** Funded with native coin and every test token: for tests and for trying the API by hand. */
    funded: z.array(Account),
    /** Deploys and owns the devnet's DeFi protocols. Optional: manifests before them lack it. */
    protocolDeployer: Account.optional(),
    /** Sends x402 settlements. Optional, as above. */
    settler: Account.optional(),
    /** Sends the aUSD faucet's drips. Optional, as above. */
    faucet: Account.optional(),
    /** Executes the devnet GMX v2's pending orders. Optional, as above. */
    gmxKeeper: Account.optional(),
  }),
});
export type DevnetManifest = z.infer<typeof DevnetManifestSchema>;
