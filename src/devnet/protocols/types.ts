import type { Chain } from 'viem';
import type { ChainName } from '../../config/chains.ts';
import type { ProtocolKey, ProtocolsConfig } from '../../protocols/config.ts';
import type { DevnetAccount } from '../accounts.ts';
import type { DevnetChain } from '../manifest.ts';

/** What a protocol's devnet deployment gets: the chain, its own deployer account, and what the devnet already has. */
export interface ProtocolDeployContext {
  chain: Chain;
  name: ChainName;
  /** The account that deploys and owns every protocol contract (its own, so other roles' nonces never move). */
  deployer: DevnetAccount;
  /** Accounts funded with native coin and every test token (tests and examples use them). */
  funded: readonly DevnetAccount[];
  /** The devnet's test tokens on this chain (USDC, USDT, aUSD, WETH), with their addresses. */
  tokens: DevnetChain['tokens'];
  log: (line: string) => void;
}

/** Options of what the devnet's protocols run beside their contracts (startDevnet passes them on). */
export interface DevnetProtocolOptions {
  /** gmxV2: how long the order keeper waits after seeing an order before executing it (default 1000 ms). */
  gmxKeeperDelayMs?: number;
}

/** What a protocol's processes get: the deploy's context on the chain's journaled RPC, and its config. */
export interface ProtocolRunContext<K extends ProtocolKey = ProtocolKey> extends ProtocolDeployContext {
  config: NonNullable<ProtocolsConfig[K]>;
  /** The protocol's section in the last run's manifest, if any: a server restarted on the same port keeps its URL. */
  previous?: ProtocolsConfig[K];
  options: DevnetProtocolOptions;
}

/** Processes a protocol runs while the devnet does (a keeper, a price server). */
export interface ProtocolRun<K extends ProtocolKey = ProtocolKey> {
  /** What the processes add to the protocol's config (a server's URL), merged before the manifest is written. */
  configPatch?: Partial<NonNullable<ProtocolsConfig[K]>>;
  /** Stops them; the devnet awaits it before it stops the chains. */
  stop(): Promise<void>;
}

export interface ProtocolDeployResult<K extends ProtocolKey = ProtocolKey> {
  /** What this call deployed: empty when the chain state already had everything (a reload). */
  deployed: string[];
  /** The protocol's chain configuration (src/protocols/config.ts): written to the manifest, read by the service. */
  config: NonNullable<ProtocolsConfig[K]>;
}

/**
 * One protocol on the devnet. Deployments must be idempotent and deterministic: a reload finds the contracts
 * where they were (do only what is missing), and a lost chain state gets the same addresses back. Addresses
 * must not depend on the order protocols deploy in: CREATE2 through the devnet's deterministic deployer.
 */
export interface DevnetProtocol<K extends ProtocolKey = ProtocolKey> {
  /** The configuration key, e.g. `aaveV3` (the protocol's own name, not the spec's slug). */
  readonly key: K;
  /** The chains it is deployed on (its family's chain). */
  readonly chains: readonly ChainName[];
  deploy(ctx: ProtocolDeployContext): Promise<ProtocolDeployResult<K>>;
  /**
   * Starts what the protocol runs beside its contracts, after every chain deployed and before the manifest is
   * written. Its transactions go through the journaled RPC, so a restart replays them.
   */
  run?(ctx: ProtocolRunContext<K>): Promise<ProtocolRun<K>>;
}
