/**
 * perp-v2's requests/cancel on a devnet of its own, whose GMX keeper waits an hour and whose clock this file moves
 * (evm_increaseTime would move it under every other test on the shared devnet): a pending deposit and a pending
 * withdrawal are listed under GET orders' requests; their cancel is refused while GMX's keeper is due to act
 * (request_not_cancellable, with when it becomes cancellable) and for anyone but their wallet (unknown_request);
 * once the request expiration has passed, each is cancelled, everything comes back, and the requests that created
 * them report them cancelled (status.order, USER_INITIATED_CANCEL).
 */
import { erc20Abi, parseEther, parseUnits, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type AgentWalletClient } from '../../../src/client/index.ts';
import { devnetChain, devnetWalletClient } from '../../../src/devnet/clients.ts';
import { startDevnet, type Devnet } from '../../../src/devnet/devnet.ts';
import { createKey } from '../../../src/keys/manage.ts';
import { startEmbeddedService, type EmbeddedService } from '../../../src/roles/embedded.ts';
import { devnetClients, newServiceSecret, tempDir } from '../../support/env.ts';
import { familyCalls, fundTokens } from '../../support/protocols.ts';
import { until } from '../../support/until.ts';

const SLUG = 'perp-v2';
const CHAIN = 'arbitrum';
type Json = Record<string, any>;

let devnet: Devnet;
let service: EmbeddedService;
let client: AgentWalletClient;
let other: AgentWalletClient;
let c: ReturnType<typeof familyCalls>;
const dataDir = tempDir('aw-perp-cancel-');

beforeAll(async () => {
  devnet = await startDevnet({ dataDir, log: () => undefined, protocols: { gmxKeeperDelayMs: 3_600_000 } });
  service = await startEmbeddedService({ dataDir, chains: devnet.chainConfigs(), serviceSecret: newServiceSecret(), port: 0 });
  client = createClient({ baseUrl: service.url, apiKey: (await createKey(service.store, { mode: 'sponsored' })).api_key, attempts: 1 });
  other = createClient({ baseUrl: service.url, apiKey: (await createKey(service.store, { mode: 'sponsored' })).api_key, attempts: 1 });
  c = familyCalls(client, SLUG);
}, 120_000);
afterAll(async () => {
  await service?.stop();
  await devnet?.stop();
});

describe('perp-v2 requests/cancel', () => {
  const agent = 'lp-canceller';
  let wallet: Address;
  let market: Address;
  const d = () => devnetClients(devnet.manifest, devnet.manifestPath);
  const held = (token: Address) => d().publicClient(CHAIN).readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] });
  const usdc = () => d().chain(CHAIN).tokens.find((t) => t.symbol === 'USDC')!.address;
  const rpc = async (method: string, params: unknown[] = []) => {
    const res = await fetch(d().chain(CHAIN).rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    const body = (await res.json()) as { error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
  };
  /** Executes an action; resolves with its status once confirmed and its request (deposit, withdrawal) found. */
  const created = async (action: string, body: Json): Promise<Json> => {
    const r = await client.protocols.execute(SLUG, action, { agent_id: agent, ...body });
    if (!r.ok) throw r.error;
    return until(`${action} to be created`, async () => {
      const s = await client.status(r.value.request_id);
      if (!s.ok) throw s.error;
      if (s.value.status === 'failed' || s.value.status === 'reverted') throw new Error(`${action} ended ${s.value.status}`);
      const o = s.value.order as Json | undefined;
      return o?.key ? (s.value as Json) : undefined;
    }, 30_000);
  };
  const orderOf = (id: string, state: string) =>
    until(`${id}'s order to be ${state}`, async () => {
      const s = await client.status(id);
      if (!s.ok) throw s.error;
      return (s.value.order as Json | undefined)?.state === state ? (s.value as Json) : undefined;
    }, 30_000);

  let deposit: Json;
  let withdrawal: Json;
  beforeAll(async () => {
    const w = await client.wallet(agent, CHAIN);
    if (!w.ok) throw w.error;
    wallet = w.value.smart_wallet_address as Address;
    await fundTokens(d(), CHAIN, wallet, { USDC: '1000' });
    await d().walletClient(CHAIN).sendTransactionSync({ to: wallet, value: parseEther('1') });
    market = (await c.get('markets')).markets[0].market as Address;
    // GM to withdraw, from the pool's seed holder: this keeper would take an hour to mint any.
    const deployer = devnet.manifest.accounts.protocolDeployer!;
    const seeder = devnetWalletClient(devnetChain(d().chain(CHAIN)), deployer.privateKey);
    await seeder.writeContractSync({ address: market, abi: erc20Abi, functionName: 'transfer', args: [wallet, parseUnits('50', 18)] });
  }, 60_000);

  it('a pending deposit and withdrawal: listed with when they become cancellable; not cancellable yet; nobody else’s to cancel', async () => {
    deposit = await created('deposits', { market: 'ETH', short_amount: '100' });
    withdrawal = await created('withdrawals', { market: 'ETH', amount: '20' });
    expect(deposit.order).toMatchObject({ state: 'pending', settles: 'next_price' });
    expect(await held(usdc())).toBe(900_000_000n);
    expect(await held(market)).toBe(parseUnits('30', 18));

    const { requests } = await c.get('orders', { agent_id: agent });
    expect(requests.map((r: Json) => [r.kind, r.key])).toEqual([
      ['deposit', deposit.order.key],
      ['withdrawal', withdrawal.order.key],
    ]);
    expect(requests[0]).toMatchObject({ market, send: [{ token: 'USDC', amount: '100' }], minimum: [{ token: 'GM' }] });
    expect(requests[1]).toMatchObject({ send: [{ token: 'GM', amount: '20' }] });
    const cancellableAt = Date.parse(requests[0].cancellable_at);
    expect(cancellableAt - Date.parse(requests[0].updated_at)).toBe(300_000);

    const early = await c.refusal(client.protocols.simulate(SLUG, 'requests/cancel', { agent_id: agent, key: deposit.order.key }));
    expect(early).toMatchObject({ status: 400, code: 'request_not_cancellable' });
    expect(Date.parse(early.body.cancellable_at)).toBe(cancellableAt);
    // Another agent of the same key, and an agent of another key: neither wallet made it.
    for (const [who, id] of [[client, 'someone-else'], [other, agent]] as const) {
      const r = await familyCalls(who, SLUG).refusal(who.protocols.simulate(SLUG, 'requests/cancel', { agent_id: id, key: deposit.order.key }));
      expect(r).toMatchObject({ status: 400, code: 'unknown_request' });
    }
  });

  it('once expired, each is cancelled: the USDC, the GM and the execution fees come back, and their requests say cancelled', async () => {
    await rpc('evm_increaseTime', [301]);
    await rpc('evm_mine');
    const ethBefore = await d().publicClient(CHAIN).getBalance({ address: wallet });
    await c.execute('requests/cancel', { agent_id: agent, key: deposit.order.key });
    await c.execute('requests/cancel', { agent_id: agent, key: withdrawal.order.key });
    expect(await held(usdc())).toBe(1_000_000_000n);
    expect(await held(market)).toBe(parseUnits('50', 18));
    // Both execution fees refunded in ETH (the cancels' own gas is sponsored).
    const refunded = (await d().publicClient(CHAIN).getBalance({ address: wallet })) - ethBefore;
    expect(refunded).toBe(BigInt(deposit.action.input.execution_fee) + BigInt(withdrawal.action.input.execution_fee));

    expect((await orderOf(deposit.request_id, 'cancelled')).order.reason).toBe('USER_INITIATED_CANCEL');
    expect((await orderOf(withdrawal.request_id, 'cancelled')).order.reason).toBe('USER_INITIATED_CANCEL');
    expect((await c.get('orders', { agent_id: agent })).requests).toEqual([]);
  });
});
