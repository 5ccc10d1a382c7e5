/**
 * perp-v2 with a stale ExchangeRouter: GMX upgrades by revoking the old router's CONTROLLER role, after which every
 * order through it reverts. Configured with a contract of the devnet's GMX that is not a CONTROLLER (its OrderVault,
 * which answers roleStore() like every GMX contract), only perp-v2 answers 503 protocol_unavailable with the
 * reason, /health says degraded and names it, and the rest of the service serves. Nothing on chain changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type AgentWalletClient } from '../../../src/client/index.ts';
import { startTestService, type TestService } from '../../support/service.ts';
import { testDevnet } from '../../support/env.ts';

type Json = Record<string, any>;

let svc: TestService;
let client: AgentWalletClient;
const gmx = testDevnet().chain('arbitrum').protocols!.gmxV2!;

beforeAll(async () => {
  svc = await startTestService({ protocols: { arbitrum: { gmxV2: { ...gmx, exchangeRouter: gmx.orderVault } } } });
  client = createClient({ baseUrl: svc.url, apiKey: (await svc.newKey('sponsored')).apiKey, attempts: 1 });
});
afterAll(async () => {
  await svc?.stop();
});

describe('perp-v2 with a stale ExchangeRouter', () => {
  it('answers 503 protocol_unavailable on its endpoints, with the reason; nothing else is affected', async () => {
    const read = await client.protocols.read('perp-v2', 'markets');
    expect(!read.ok && read.error).toMatchObject({ status: 503, code: 'protocol_unavailable' });
    expect(!read.ok && read.error.message).toContain(`${gmx.orderVault} is no longer a CONTROLLER`);
    const order = await client.protocols.simulate('perp-v2', 'orders', {
      agent_id: 'stale',
      type: 'market_increase',
      market: 'ETH',
      side: 'long',
      size_usd: '100',
      collateral_token: 'USDC',
      collateral_amount: '20',
    });
    expect(!order.ok && order.error).toMatchObject({ status: 503, code: 'protocol_unavailable' });
    // The alias too, and an action as well as its simulation.
    const aliased = await client.protocols.execute('gmx-v2', 'orders', { agent_id: 'stale', type: 'market_increase', market: 'ETH', side: 'long', size_usd: '100', collateral_token: 'USDC', collateral_amount: '20' });
    expect(!aliased.ok && aliased.error).toMatchObject({ status: 503, code: 'protocol_unavailable' });

    const lending = await client.protocols.read('lend-b-v3', 'markets');
    expect(lending.ok).toBe(true);
    expect((await client.wallet('stale', 'arbitrum')).ok).toBe(true);
  });

  it('/health is degraded and says which family, on which chain, and why', async () => {
    const health = await client.health();
    if (!health.ok) throw health.error;
    const h = health.value as Json;
    expect(h.status).toBe('degraded');
    expect(h.store.writable).toBe(true);
    expect(h.protocols).toEqual([{ family: 'perp-v2', chain: 'arbitrum', available: false, reason: expect.stringContaining('no longer a CONTROLLER') }]);
  });
});
