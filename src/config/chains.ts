import { z } from 'zod';

/** Canonical payload chain names (spec §1.9) and the test networks they stand for. */
export const CHAIN_NAMES = ['ethereum', 'base', 'arbitrum'] as const;
export type ChainName = (typeof CHAIN_NAMES)[number];
export const ChainNameSchema = z.enum(CHAIN_NAMES);

export const CHAIN_ALIASES: Readonly<Record<string, ChainName>> = { eth: 'ethereum', arb: 'arbitrum' };

export const CHAIN_IDS: Readonly<Record<ChainName, number>> = {
  ethereum: 11155111, // Sepolia
  base: 84532, // Base Sepolia
  arbitrum: 421614, // Arbitrum Sepolia
};

export const CHAIN_NETWORK_NAMES: Readonly<Record<ChainName, string>> = {
  ethereum: 'Ethereum Sepolia',
  base: 'Base Sepolia',
  arbitrum: 'Arbitrum Sepolia',
};

/** Maps a payload value (canonical or alias, any case) to the canonical name, or undefined. */
export function canonicalChain(value: string): ChainName | undefined {
  const v = value.trim().toLowerCase();
  if ((CHAIN_NAMES as readonly string[]).includes(v)) return v as ChainName;
  // Own keys only: `constructor` or `__proto__` must not find Object.prototype's members.
  return Object.hasOwn(CHAIN_ALIASES, v) ? CHAIN_ALIASES[v] : undefined;
}
