import { afterAll, beforeAll } from 'vitest';
import { createKey } from '../../src/keys/manage.ts';
import type { AgentScope, PaymentMode } from '../../src/api/v1alpha1/index.ts';
import { startEmbeddedService, type EmbeddedService, type EmbeddedServiceOptions } from '../../src/roles/embedded.ts';
import { clusterTarget, startTestCluster } from './cluster.ts';
import { newServiceSecret, tempDir, testDevnet } from './env.ts';
import { apiClient } from './http.ts';
import { withBundlers } from './alto.ts';
import type { ChainName } from '../../src/config/chains.ts';
import type { Address } from 'viem';
import type { ChainConfig, RpcBundlerConfig, SponsorConfig } from '../../src/config/chainConfig.ts';

/** The chains with the sponsors given by name; an ERC-7677 one leaves the service without a paymaster key. */
function withSponsors(chains: ChainConfig[], sponsors: Partial<Record<ChainName, { sponsor: SponsorConfig; paymaster: Address }>> | undefined): ChainConfig[] {
  return chains.map((c) => {
    const s = sponsors?.[c.name];
    if (!s) return c;
    const { paymasterSignerKey: _, ...rest } = c;
    return { ...rest, paymaster: s.paymaster, sponsor: s.sponsor };
  });
}

/** The whole service in this process against the shared devnet, in a fresh data dir with a fresh secret. */
export async function startTestService(
  opts: {
    dataDir?: string;
    serviceSecret?: string;
    webhooks?: EmbeddedServiceOptions['webhooks'];
    retentionSeconds?: number;
    payments?: EmbeddedServiceOptions['payments'];
    connections?: EmbeddedServiceOptions['connections'];
    /** Confirmations a payment transaction needs on every chain (the devnet's default: 1). */
    paymentConfirmations?: number;
    /** How long the gateway waits for the controller's decision before answering 500 decision_timeout. */
    decisionTimeoutMs?: number;
    /** The protocol families served, and the chains' configuration of them (a test family's own). */
    families?: EmbeddedServiceOptions['families'];
    protocols?: Partial<Record<string, Record<string, unknown>>>;
    /** Chains bundled by an outside ERC-4337 bundler (test/support/alto.ts) instead of the built-in one. */
    bundlers?: Partial<Record<ChainName, RpcBundlerConfig>>;
    /** Chains sponsored otherwise than by the devnet's paymaster and its signer (test/support/erc7677Server.ts). */
    sponsors?: Partial<Record<ChainName, { sponsor: SponsorConfig; paymaster: Address }>>;
  } = {},
) {
  const devnet = testDevnet();
  const dataDir = opts.dataDir ?? tempDir();
  const serviceSecret = opts.serviceSecret ?? newServiceSecret();
  const service: EmbeddedService = await startEmbeddedService({
    dataDir,
    chains: withSponsors(withBundlers(devnet.chainConfigs(), opts.bundlers), opts.sponsors).map((c) => ({
      ...c,
      paymentConfirmations: opts.paymentConfirmations ?? c.paymentConfirmations,
      protocols: { ...c.protocols, ...(opts.protocols?.[c.name] as object) },
    })),
    ...(opts.families && { families: opts.families }),
    serviceSecret,
    port: 0,
    decisionTimeoutMs: opts.decisionTimeoutMs ?? 20_000,
    spendStatusMs: 1_000, // the budgets scenario reads the policies' spend
    ...(opts.webhooks && { webhooks: opts.webhooks }),
    ...(opts.retentionSeconds !== undefined && { retentionSeconds: opts.retentionSeconds }),
    // The faucet account is one of the workers' own (chainConfigsFromManifest): its drips never pay.
    ...(opts.payments && { payments: opts.payments }),
    ...(opts.connections && { connections: opts.connections }),
  });
  return {
    ...service,
    devnet,
    dataDir,
    serviceSecret,
    async newKey(mode: PaymentMode = 'sponsored', opts: { agentScope?: AgentScope } = {}) {
      // Tests poll quickly and fire bursts: give test keys room (the limiter itself has its own tests).
      const { api_key, webhook_secret, key } = await createKey(
        service.store,
        { mode, requestsPerSecond: 10_000, burst: 10_000, ...opts },
        undefined,
        service.webhookSecrets,
      );
      return { apiKey: api_key, clientId: key.id, webhookSecret: webhook_secret!, api: apiClient(service.url, api_key) };
    },
    anonymous: apiClient(service.url),
  };
}
export type TestService = Awaited<ReturnType<typeof startTestService>>;

/** What the shared end-to-end scenarios use: the same for the embedded service and the cluster layout. */
export interface ScenarioService {
  url: string;
  store: TestService['store'] | Awaited<ReturnType<typeof startTestCluster>>['store'];
  devnet: TestService['devnet'];
  serviceSecret: string;
  newKey: TestService['newKey'];
  anonymous: TestService['anonymous'];
  stop(): Promise<void>;
}

/**
 * One service for a test file: started before its tests, stopped after. Call the returned getter in tests.
 * In the vitest `cluster` project it is the cluster layout (every role a process, real API server and Redis);
 * otherwise the embedded service in this process. The scenarios are the same.
 */
export function useTestService(): () => ScenarioService {
  let svc: ScenarioService | undefined;
  beforeAll(async () => {
    svc = clusterTarget() ? await startTestCluster() : await startTestService();
  });
  afterAll(async () => {
    await svc?.stop();
  });
  return () => {
    if (!svc) throw new Error('the test service is not started (use it inside tests)');
    return svc;
  };
}
