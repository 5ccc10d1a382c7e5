import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { API_VERSION, type ExecutionRequest, type ExecutionRequestStatus, type PaymentMode } from '../../api/v1alpha1/index.ts';
import { parseApiKey } from '../../keys/apiKey.ts';
import { createKey } from '../../keys/manage.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../../store/embedded/index.ts';
import { buildGateway } from '../app.ts';
import type { GatewayDeps } from '../context.ts';

/** A gateway on a real embedded store in a temporary directory, plus helpers to make keys and requests. */
export interface TestGateway {
  app: FastifyInstance;
  store: EmbeddedStore;
  /** Issues an API key (through the operator's key management) and returns it with its client id. */
  newKey(opts?: { mode?: PaymentMode; requestsPerSecond?: number; burst?: number }): Promise<{ apiKey: string; clientId: string }>;
  close(): Promise<void>;
}

export async function openTestGateway(deps: Partial<GatewayDeps> = {}): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-test-'));
  const store = await openEmbeddedStore({ dir, fsync: false });
  const app = await buildGateway({ store, workers: new Map(), publicRateLimit: false, ...deps });
  return {
    app,
    store,
    async newKey(opts = {}) {
      const { api_key } = await createKey(store, { mode: opts.mode ?? 'sponsored', ...opts });
      return { apiKey: api_key, clientId: parseApiKey(api_key)!.clientId };
    },
    async close() {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An ExecutionRequest as the gateway would create it, for tests that need one in the store directly. */
export function executionRequest(
  name: string,
  apiClient: string,
  overrides: { agentId?: string; strategyId?: string; callbackUrl?: string; chain?: 'ethereum' | 'base' | 'arbitrum' } = {},
): ExecutionRequest {
  return {
    apiVersion: API_VERSION,
    kind: 'ExecutionRequest',
    metadata: { name, namespace: 'default' },
    spec: {
      apiClient,
      agentId: overrides.agentId ?? 'agent-1',
      chain: overrides.chain ?? 'base',
      calls: [{ target: `0x${'11'.repeat(20)}`, value: '0', data: '0xd09de08a' }],
      batch: false,
      ...(overrides.strategyId !== undefined ? { strategyId: overrides.strategyId } : {}),
      ...(overrides.callbackUrl !== undefined ? { callbackUrl: overrides.callbackUrl } : {}),
      paymentMode: 'sponsored',
    },
  };
}

/** Writes a status the way the controller would (read, then updateStatus with the read resourceVersion). */
export async function writeStatus(
  store: EmbeddedStore,
  name: string,
  status: (current: ExecutionRequestStatus) => ExecutionRequestStatus,
): Promise<ExecutionRequest> {
  const current = await store.get('ExecutionRequest', name);
  return store.updateStatus({ ...current, status: status(current.status ?? {}) });
}
