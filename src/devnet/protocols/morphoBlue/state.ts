import type { Address, PublicClient } from 'viem';
import { morphoAbi, oracleMockAbi, type MorphoBlueContracts } from './contracts.ts';
import type { DevnetMarkets } from './markets.ts';

/** What a chain has of the devnet's Morpho Blue deployment (read in one round of parallel calls). */
export interface MorphoBlueState {
  code: Record<keyof MorphoBlueContracts, boolean>;
  /** Morpho's owner; undefined without Morpho. */
  owner: Address | undefined;
  irmEnabled: boolean;
  /** The OracleMock's price; 0 until set (or without the oracle). */
  oraclePrice: bigint;
  /** Per market of the plan, in its order. */
  markets: { lltvEnabled: boolean; created: boolean; seeded: boolean }[];
}

export async function readMorphoBlueState(
  client: PublicClient,
  contracts: MorphoBlueContracts,
  plan: DevnetMarkets,
  deployer: Address,
): Promise<MorphoBlueState> {
  const hasCode = async (address: Address): Promise<boolean> => ((await client.getCode({ address })) ?? '0x') !== '0x';
  const [morpho, irm, oracle] = await Promise.all([contracts.morpho, contracts.irm, contracts.oracle].map((c) => hasCode(c.address)));
  const code = { morpho: morpho!, irm: irm!, oracle: oracle! };
  // A call to an address without code answers no data, which viem reports as an error: read only what exists.
  const readPrice = (): Promise<bigint> =>
    code.oracle ? client.readContract({ address: contracts.oracle.address, abi: oracleMockAbi, functionName: 'price' }) : Promise.resolve(0n);
  if (!code.morpho) {
    return { code, owner: undefined, irmEnabled: false, oraclePrice: await readPrice(), markets: plan.markets.map(() => ({ lltvEnabled: false, created: false, seeded: false })) };
  }
  const morphoAt = contracts.morpho.address;
  const [owner, irmEnabled, oraclePrice, markets] = await Promise.all([
    client.readContract({ address: morphoAt, abi: morphoAbi, functionName: 'owner' }),
    client.readContract({ address: morphoAt, abi: morphoAbi, functionName: 'isIrmEnabled', args: [contracts.irm.address] }),
    readPrice(),
    Promise.all(
      plan.markets.map(async (m) => {
        const [lltvEnabled, market, position] = await Promise.all([
          client.readContract({ address: morphoAt, abi: morphoAbi, functionName: 'isLltvEnabled', args: [m.params.lltv] }),
          client.readContract({ address: morphoAt, abi: morphoAbi, functionName: 'market', args: [m.id] }),
          client.readContract({ address: morphoAt, abi: morphoAbi, functionName: 'position', args: [m.id, deployer] }),
        ]);
        // market(): lastUpdate is set by createMarket and never 0 afterwards. position(): supplyShares first.
        return { lltvEnabled, created: market[4] !== 0n, seeded: position[0] > 0n };
      }),
    ),
  ]);
  return { code, owner, irmEnabled, oraclePrice, markets };
}

/** What the deployment still lacks, in words (empty: complete). */
export function missingParts(state: MorphoBlueState, contracts: MorphoBlueContracts, plan: DevnetMarkets): string[] {
  const missing: string[] = [];
  for (const key of ['morpho', 'irm', 'oracle'] as const) {
    if (!state.code[key]) missing.push(`${contracts[key].label} (no code at ${contracts[key].address})`);
  }
  if (state.oraclePrice === 0n) missing.push('the OracleMock price');
  if (!state.irmEnabled) missing.push('the IrmMock enabled');
  plan.markets.forEach((m, i) => {
    const s = state.markets[i]!;
    if (!s.lltvEnabled) missing.push(`LLTV ${m.params.lltv} enabled`);
    if (!s.created) missing.push(`market ${m.label} (${m.id})`);
    if (!s.seeded) missing.push(`the deployer's supply to ${m.label}`);
  });
  return missing;
}
