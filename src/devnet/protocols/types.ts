import type { Address, Chain } from 'viem';
import type { ChainName } from '../../config/chains.ts';
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
  /** The devnet's test tokens on this chain (USDC, USDT, aUSD), with their addresses. */
  tokens: DevnetChain['tokens'];
  log: (line: string) => void;
}

export interface ProtocolDeployResult {
  /** What this call deployed: empty when the chain state already had everything (a reload). */
  deployed: string[];
  /** Every address a client of the protocol needs, by name (pool, oracle, markets…): written to the manifest. */
  addresses: Record<string, Address>;
}

/**
 * One protocol on the devnet. Deployments must be idempotent and deterministic: a reload finds the contracts
 * where the manifest says (do only what is missing), and a lost chain state gets the same addresses back.
 */
export interface DevnetProtocol {
  /** The manifest key, e.g. `aaveV3` (the protocol's own name, not the spec's slug). */
  readonly key: string;
  /** The chains it is deployed on (its family's chain). */
  readonly chains: readonly ChainName[];
  deploy(ctx: ProtocolDeployContext): Promise<ProtocolDeployResult>;
}
