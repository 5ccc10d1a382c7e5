import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { entryPoint07Abi } from '../chain/abi.ts';
import { createChainClient } from '../chain/client.ts';
import { createChainWorker, type LocalChainWorker } from '../chain/worker/index.ts';
import { chainUnderTest, freshSecret } from '../../test/support/chainUnderTest.ts';
import { freePort } from '../../test/support/net.ts';
import { watchBalances, type BalanceWatch } from './balances.ts';
import { createMetrics } from './registry.ts';
import { parseExposition } from './testing/exposition.ts';

/** The balance and deposit gauges read through a real chain worker's client from the devnet. */
describe('account balance and paymaster deposit gauges (devnet)', () => {
  const env = chainUnderTest('base');
  const metrics = createMetrics({ defaultMetrics: false });
  const settlerKey = generatePrivateKey();
  const faucetKey = generatePrivateKey();
  const settler = privateKeyToAccount(settlerKey).address;
  const faucet = privateKeyToAccount(faucetKey).address;
  let worker: LocalChainWorker;
  let watch: BalanceWatch;
  const errors: unknown[] = [];

  const scrape = async () => parseExposition(await metrics.scrape());
  const deposit = () =>
    env.client.readContract({ address: env.config.entryPoint, abi: entryPoint07Abi, functionName: 'balanceOf', args: [env.config.paymaster] });

  beforeAll(async () => {
    await env.funded.sendTransactionSync({ to: settler, value: parseEther('0.123') });
    worker = await createChainWorker(
      { ...env.config, sendingAccounts: { x402SettlerKey: settlerKey, faucetKey } },
      { serviceSecret: freshSecret() },
    );
    watch = watchBalances(metrics, worker, {
      chain: 'base',
      entryPoint: env.config.entryPoint,
      paymaster: env.config.paymaster,
      intervalMs: 3_600_000, // the test refreshes by hand
      onError: (e) => errors.push(e),
    });
    await watch.refresh();
  });
  afterAll(async () => {
    watch?.stop();
    await worker?.close();
  });

  it('reports every executor, the settler and the faucet account by name and address, as the chain has them', async () => {
    const m = await scrape();
    expect(m.types.get('agentwallet_account_balance_wei')).toBe('gauge');
    const executors = env.config.executorKeys.map((k) => privateKeyToAccount(k).address);
    for (const [i, address] of executors.entries()) {
      const onChain = await env.client.getBalance({ address });
      expect(onChain).toBeGreaterThan(0n);
      expect(m.value('agentwallet_account_balance_wei', { chain: 'base', account: `executor-${i}`, address })).toBe(Number(onChain));
    }
    expect(m.value('agentwallet_account_balance_wei', { chain: 'base', account: 'x402-settler', address: settler })).toBe(Number(parseEther('0.123')));
    expect(m.value('agentwallet_account_balance_wei', { chain: 'base', account: 'faucet', address: faucet })).toBe(0);
    expect(m.series('agentwallet_account_balance_wei')).toBe(executors.length + 2);
    expect(errors).toEqual([]);
  });

  it('reports the paymaster’s EntryPoint deposit, and follows a top-up', async () => {
    const before = await deposit();
    expect(before).toBeGreaterThan(0n);
    expect((await scrape()).value('agentwallet_paymaster_deposit_wei', { chain: 'base', paymaster: env.config.paymaster })).toBe(Number(before));
    // The refill the runbook describes: EntryPoint.depositTo(paymaster) with value.
    // Waits for its receipt: a read right after a plain send saw the block before it (CI run 5).
    const receipt = await env.funded.writeContractSync({
      address: env.config.entryPoint,
      abi: entryPoint07Abi,
      functionName: 'depositTo',
      args: [env.config.paymaster],
      value: parseEther('2'),
    });
    expect(receipt.status).toBe('success');
    // The node may answer a moment behind the block it just mined (anvil's synchronous send): read until it shows.
    await expect.poll(async () => (await deposit()) - before, { timeout: 10_000, interval: 50 }).toBe(parseEther('2'));
    const after = await deposit();
    await watch.refresh();
    const m = await scrape();
    expect(m.value('agentwallet_paymaster_deposit_wei', { chain: 'base', paymaster: env.config.paymaster })).toBe(Number(after));
    expect(m.value('agentwallet_balances_updated_timestamp_seconds', { chain: 'base' })).toBeGreaterThan(Date.now() / 1000 - 60);
  });

  it('keeps the last figures when the chain does not answer: only the update time ages', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const own = createMetrics({ defaultMetrics: false });
    const addresses: Address[] = [settler];
    const seen: unknown[] = [];
    const source = { client: worker.client, senders: async () => addresses, sendingAccount: async () => undefined };
    const live = watchBalances(own, source, { chain: 'base', entryPoint: env.config.entryPoint, paymaster: env.config.paymaster, intervalMs: 3_600_000 });
    await live.refresh();
    live.stop();
    const stamp = parseExposition(await own.scrape()).value('agentwallet_balances_updated_timestamp_seconds', { chain: 'base' });
    const broken = watchBalances(
      own,
      { ...source, client: createChainClient({ ...env.config, rpcUrl: dead }, { timeoutMs: 500 }) },
      { chain: 'base', entryPoint: env.config.entryPoint, paymaster: env.config.paymaster, intervalMs: 3_600_000, onError: (e) => seen.push(e) },
    );
    await expect(broken.refresh()).rejects.toThrow();
    broken.stop();
    const m = parseExposition(await own.scrape());
    expect(m.value('agentwallet_account_balance_wei', { account: 'executor-0', address: settler })).toBe(Number(parseEther('0.123')));
    expect(m.value('agentwallet_balances_updated_timestamp_seconds', { chain: 'base' })).toBe(stamp);
    expect(seen.length).toBeGreaterThanOrEqual(1); // the timer's first read failed too, and said so
  });
});
