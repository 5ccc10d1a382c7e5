/**
 * The cluster layout with an outside bundler on one chain (issue 22 part 1): the ethereum chain worker, a separate
 * process with no executor keys, hands operations to the real Alto over JSON-RPC. A sponsored and a manual execution
 * reach `confirmed`; a kill -9 of the worker while Alto holds an operation: the restarted worker has lost its
 * memory, the controller restores it and asks again, and the operation runs once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { encodeFunctionData, type Address, type Hex } from 'viem';
import { entryPoint07Abi } from '../../src/chain/abi.ts';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { startAlto, type AltoProcess } from '../support/alto.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { newPayer } from '../support/payer.ts';
import { until } from '../support/until.ts';

const CHAIN = 'ethereum';
let alto: AltoProcess;
let cluster: TestCluster;
beforeAll(async () => {
  alto = await startAlto(CHAIN);
  cluster = await startTestCluster({ bundlers: { [CHAIN]: alto.bundlerConfig() } });
}, 180_000);
afterAll(async () => {
  await cluster?.stop();
  await alto?.stop();
});

const body = (agent: string) => ({
  agent_id: agent,
  chain: CHAIN,
  target_contract: cluster.devnet.chain(CHAIN).testContracts.counter,
  calldata: encodeFunctionData({ abi: counterAbi, functionName: 'increment' }),
});
const sentBy = async (txHash: string) => (await cluster.devnet.publicClient(CHAIN).getTransactionReceipt({ hash: txHash as Hex })).from.toLowerCase();

it('sponsored: confirmed, the bundle sent by Alto\'s executor, not the worker', async () => {
  const { api } = await cluster.newKey('sponsored');
  const r = await api.post('/execute', body('c-alto-sp'));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const status = await api.waitForTerminal(r.body.request_id, 60_000);
  expect(status.status, JSON.stringify(status)).toBe('confirmed');
  expect(await sentBy(status.tx_hash)).toBe(alto.executor.toLowerCase());
});

it('manual: 402, paid on chain, the proof, then confirmed through Alto', async () => {
  const { api } = await cluster.newKey('manual');
  const quote = (await api.post('/execute', body('c-alto-man'))).body;
  expect(quote.error).toBe('payment_required');
  const payer = await newPayer(cluster.devnet, CHAIN);
  const tx = await payer.pay('USDC', quote.payment_address as Address, BigInt(quote.required_amount_raw.USDC));
  const paid = await api.post('/execute', body('c-alto-man'), {
    'x-payment-proof': JSON.stringify({ payer: payer.address, token: 'USDC', chain: CHAIN, tx_hash: tx, request_id: quote.request_id }),
  });
  expect(paid.status, JSON.stringify(paid.body)).toBe(200);
  const status = await api.waitForTerminal(quote.request_id, 60_000);
  expect(status.status, JSON.stringify(status)).toBe('confirmed');
  expect(await sentBy(status.tx_hash)).toBe(alto.executor.toLowerCase());
});

it('kill -9 of the chain worker while Alto holds its operation: confirmed once after the restart', async () => {
  // Alto stops bundling on its own: the operation stays in its mempool.
  await alto.kill();
  await alto.restart('manual');
  const { api } = await cluster.newKey('sponsored');
  const wallet = (await api.get(`/wallet?agent_id=c-alto-crash&chain=${CHAIN}`)).body.smart_wallet_address as Address;
  const r = await api.post('/execute', body('c-alto-crash'));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  await until('Alto holds the operation', async () => ((await alto.mempoolSenders()).includes(wallet.toLowerCase()) ? true : undefined), 60_000);
  await cluster.restartWorker(CHAIN, 'SIGKILL');
  await alto.setAutoBundling();
  const status = await api.waitForTerminal(r.body.request_id, 90_000);
  expect(status.status, JSON.stringify(status)).toBe('confirmed');
  const events = await cluster.devnet
    .publicClient(CHAIN)
    .getContractEvents({ address: cluster.devnet.chain(CHAIN).entryPoint, abi: entryPoint07Abi, eventName: 'UserOperationEvent', args: { sender: wallet }, fromBlock: 0n });
  expect(events).toHaveLength(1);
}, 180_000);
