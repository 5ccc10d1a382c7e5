import { randomBytes } from 'node:crypto';
import { getAddress, type Address } from 'viem';
import { newServiceSecret, testDevnet } from './env.ts';
import { createChainWorker, type LocalChainWorker } from '../../src/chain/index.ts';
import type { ChainName } from '../../src/config/chains.ts';
import { testStablecoinAbi } from '../../src/devnet/contracts.ts';
import { faucetSettingsFromManifest, type DripLimitConfig, type FaucetSettings } from '../../src/faucet/config.ts';

/** Limits no test meets unless it sets its own. */
export const GENEROUS_LIMITS = { perAddress: { burst: 1_000, everySeconds: 1 }, perClient: { burst: 1_000, everySeconds: 1 } };

/** The faucet of the run's shared devnet (test/globalSetup.ts), with generous limits unless given others. */
export function devnetFaucetSettings(
  overrides: { amount?: string; limits?: { perAddress: DripLimitConfig; perClient: DripLimitConfig }; receiptTimeoutMs?: number } = {},
): FaucetSettings {
  return faucetSettingsFromManifest(testDevnet().manifest, { limits: GENEROUS_LIMITS, ...overrides });
}

/** An address nobody has used: its balance starts at 0. */
export const freshAddress = (): Address => getAddress(`0x${randomBytes(20).toString('hex')}`);

/** An address's aUSD on a devnet chain, read from the chain itself. */
export async function aUSDBalance(chain: ChainName, owner: Address): Promise<bigint> {
  const devnet = testDevnet();
  const token = devnet.chain(chain).tokens.find((t) => t.symbol === 'aUSD')!.address;
  return devnet.publicClient(chain).readContract({ address: token, abi: testStablecoinAbi, functionName: 'balanceOf', args: [owner] });
}

let workers: Promise<Map<ChainName, LocalChainWorker>> | undefined;

/**
 * In-process chain workers of the shared devnet, one per chain, made once per test file: they hold the devnet's
 * faucet account (chainConfigsFromManifest) and send the drips, as the embedded service's workers do.
 */
export function devnetFaucetWorkers(): Promise<Map<ChainName, LocalChainWorker>> {
  workers ??= (async () => {
    const secret = newServiceSecret();
    const made = await Promise.all(testDevnet().chainConfigs().map(async (c) => [c.name, await createChainWorker(c, { serviceSecret: secret })] as const));
    return new Map(made);
  })();
  return workers;
}

/** Closes the workers devnetFaucetWorkers made (afterAll of a file that used them). */
export async function closeDevnetFaucetWorkers(): Promise<void> {
  const made = workers;
  workers = undefined;
  if (made) for (const w of (await made).values()) await w.close();
}
