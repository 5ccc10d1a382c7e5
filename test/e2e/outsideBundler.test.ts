/**
 * The service with an outside ERC-4337 bundler (issue 22 part 1): the real Alto (test/alto, `--safe-mode false`)
 * bundles every devnet chain instead of the built-in bundler. Sponsored, manual and auto executions reach
 * `confirmed` on each chain, their bundles sent by Alto's executor; and a kill -9 of the service while an operation
 * sits in Alto's mempool neither loses nor doubles it.
 */
import { encodeFunctionData, parseEventLogs, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callAdminSocket } from '../../src/admin/socket.ts';
import { entryPoint07Abi } from '../../src/chain/abi.ts';
import type { ChainName } from '../../src/config/chains.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { startAlto, type AltoProcess } from '../support/alto.ts';
import { killHard, spawnServiceChild, stopChild } from '../support/child.ts';
import { newServiceSecret, tempDir, testDevnet } from '../support/env.ts';
import { apiClient } from '../support/http.ts';
import { newPayer } from '../support/payer.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { until } from '../support/until.ts';

const CHAINS: ChainName[] = ['ethereum', 'base', 'arbitrum'];
const INCREMENT = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
const devnet = testDevnet();
const body = (chain: ChainName, agent: string) => ({ agent_id: agent, chain, target_contract: devnet.chain(chain).testContracts.counter, calldata: INCREMENT, value: '0' });

/** The bundle transaction's sender and the operation's UserOperationEvent, read from the chain. */
async function inclusion(chain: ChainName, txHash: Hex) {
  const receipt = await devnet.publicClient(chain).getTransactionReceipt({ hash: txHash });
  const events = parseEventLogs({ abi: entryPoint07Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
  return { from: receipt.from.toLowerCase(), events };
}

describe('every devnet chain bundled by Alto', () => {
  const altos = new Map<ChainName, AltoProcess>();
  let svc: TestService;
  beforeAll(async () => {
    for (const chain of CHAINS) altos.set(chain, await startAlto(chain));
    svc = await startTestService({ bundlers: Object.fromEntries(CHAINS.map((c) => [c, altos.get(c)!.bundlerConfig()])) });
  }, 180_000);
  afterAll(async () => {
    await svc?.stop();
    await Promise.all([...altos.values()].map((a) => a.stop()));
  });

  const confirmedByAlto = async (chain: ChainName, api: TestService['anonymous'], id: string) => {
    const status = await api.waitForTerminal(id, 60_000);
    expect(status.status, JSON.stringify(status)).toBe('confirmed');
    const { from, events } = await inclusion(chain, status.tx_hash as Hex);
    expect(from).toBe(altos.get(chain)!.executor.toLowerCase());
    expect(events.length).toBeGreaterThanOrEqual(1);
    return status;
  };

  it.each(CHAINS)('%s: a sponsored execution is confirmed, its bundle sent by Alto', async (chain) => {
    const { api } = await svc.newKey('sponsored');
    const r = await api.post('/execute', body(chain, `alto-sp-${chain}`));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await confirmedByAlto(chain, api, r.body.request_id);
  });

  it.each(CHAINS)('%s: manual mode: 402, a payment on chain, the proof, then confirmed through Alto', async (chain) => {
    const { api } = await svc.newKey('manual');
    const quote = (await api.post('/execute', body(chain, `alto-man-${chain}`))).body;
    expect(quote.error).toBe('payment_required');
    const payer = await newPayer(devnet, chain);
    const tx = await payer.pay('USDC', quote.payment_address as Address, BigInt(quote.required_amount_raw.USDC));
    const paid = await api.post('/execute', body(chain, `alto-man-${chain}`), {
      'x-payment-proof': JSON.stringify({ payer: payer.address, token: 'USDC', chain, tx_hash: tx, request_id: quote.request_id }),
    });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    await confirmedByAlto(chain, api, quote.request_id);
  });

  it.each(CHAINS)('%s: auto mode: the fee paid from the wallet in the same operation, confirmed through Alto', async (chain) => {
    const { api } = await svc.newKey('auto');
    const wallet = (await api.get(`/wallet?agent_id=alto-auto-${chain}&chain=${chain}`)).body.smart_wallet_address as Address;
    await (await newPayer(devnet, chain)).mint('USDC', wallet, 100_000_000n);
    const r = await api.post('/execute', body(chain, `alto-auto-${chain}`));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await confirmedByAlto(chain, api, r.body.request_id);
    expect((await svc.store.get('ExecutionRequest', r.body.request_id)).status?.payment?.paid).toMatchObject({ method: 'auto', token: 'USDC' });
  });
});

it('kill -9 of the service while its operation sits in Alto\'s mempool: confirmed after the restart, run exactly once', { timeout: 240_000 }, async () => {
  const chain: ChainName = 'base';
  const alto = await startAlto(chain, { bundleMode: 'manual' });
  const dataDir = tempDir('aw-alto-crash-');
  const secret = newServiceSecret();
  const env = { AGENT_WALLET_TEST_BUNDLERS: JSON.stringify({ [chain]: alto.bundlerConfig() }) };
  let service = await spawnServiceChild(dataDir, secret, env);
  try {
    const { api_key } = (await callAdminSocket(dataDir, 'POST', '/keys', { mode: 'sponsored', requestsPerSecond: 10_000, burst: 10_000 })) as { api_key: string };
    const counter = devnet.chain(chain).testContracts.counter;
    const count = () => devnet.publicClient(chain).readContract({ address: counter, abi: counterAbi, functionName: 'number' });
    let api = apiClient(service.url, api_key);
    const wallet = (await api.get(`/wallet?agent_id=alto-crash&chain=${chain}`)).body.smart_wallet_address as Address;
    // The request is handed to Alto, which holds it (manual mode) without bundling it.
    const r = await api.post('/execute', body(chain, 'alto-crash'));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const id = r.body.request_id as string;
    await until('Alto holds the operation', async () => ((await alto.mempoolSenders()).includes(wallet.toLowerCase()) ? true : undefined));
    const before = await count();
    await killHard(service.child);

    // Restarted from its data dir, the service hands the same operation on again (Alto: already held); then Alto bundles.
    service = await spawnServiceChild(dataDir, secret, env);
    api = apiClient(service.url, api_key);
    await alto.setAutoBundling();
    const status = await api.waitForTerminal(id, 90_000);
    expect(status.status, JSON.stringify(status)).toBe('confirmed');
    const { from } = await inclusion(chain, status.tx_hash as Hex);
    expect(from).toBe(alto.executor.toLowerCase());
    // The wallet's one operation, once: one UserOperationEvent of the wallet on the whole chain, one increment.
    const events = await devnet.publicClient(chain).getContractEvents({ address: devnet.chain(chain).entryPoint, abi: entryPoint07Abi, eventName: 'UserOperationEvent', args: { sender: wallet }, fromBlock: 0n });
    expect(events).toHaveLength(1);
    expect(await count()).toBe(before + 1n);
  } finally {
    await stopChild(service.child);
    await alto.stop();
  }
});
