import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseAbiItem, toEventSelector, type Address, type Hex } from 'viem';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tempDir } from '../../../test/support/env.ts';
import type { ExecutionRequest, ExecutionRequestStatus } from '../../api/v1alpha1/index.ts';
import type { ChainWorker, LogQuery, ReceiptLog, TransactionReceiptInfo } from '../../chain/types.ts';
import { executionRequest } from '../../gateway/testing/harness.ts';
import type { ProtocolsConfig } from '../../protocols/config.ts';
import type { AnyFamily, OrderFollow, OrderSettlement } from '../../protocols/types.ts';
import { Informer } from '../../runtime/index.ts';
import { openEmbeddedStore, type EmbeddedStore } from '../../store/embedded/index.ts';
import { startOrderController, type OrderController } from './controller.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitFor<T>(get: () => Promise<T | undefined>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

const ENTRY_POINT: Address = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';
const PROTOCOL: Address = `0x${'ab'.repeat(20)}`;
const OP_EVENT = toEventSelector(parseAbiItem('event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)'));
const BEFORE = toEventSelector(parseAbiItem('event BeforeExecution()'));
const CREATED = toEventSelector(parseAbiItem('event Created(bytes32 indexed key)'));
const hash = (b: string) => `0x${b.repeat(32)}` as Hex;
const opLog = (userOpHash: Hex, logIndex: number): ReceiptLog => ({ address: ENTRY_POINT, topics: [OP_EVENT, userOpHash, hash('00'), hash('00')], data: '0x', logIndex });
const created = (key: Hex, logIndex: number): ReceiptLog => ({ address: PROTOCOL, topics: [CREATED, key], data: '0x', logIndex });

/**
 * A chain the test scripts: receipts by transaction, and settlements (the protocol's logs) by order key, each at a
 * block; getLogs answers the settlements within the asked range and says how far it looked.
 */
function scriptedChain() {
  const receipts = new Map<string, TransactionReceiptInfo>();
  const settlements = new Map<string, OrderSettlement>();
  let head = 100n;
  const queries: LogQuery[] = [];
  const worker = {
    chain: 'arbitrum',
    getTransactionReceipt: async (h: Hex) => receipts.get(h),
    getLogs: async (q: LogQuery) => {
      queries.push(q);
      return { logs: [], toBlock: head };
    },
  } as unknown as ChainWorker;
  const follow: OrderFollow<never> = {
    created: (_ctx, logs) => {
      const log = logs.find((l) => l.topics[0] === CREATED && l.address === PROTOCOL);
      return log ? { key: log.topics[1]! } : undefined;
    },
    settled: async (ctx, key, fromBlock) => {
      const { toBlock } = await ctx.events.getLogs({ address: PROTOCOL, topics: [null, key], fromBlock });
      const s = settlements.get(key);
      return { ...(s && s.blockNumber >= fromBlock && s.blockNumber <= toBlock && { settlement: s }), searchedTo: toBlock };
    },
    events: { Executed: 'perp.order_executed', Cancelled: 'perp.order_cancelled', Frozen: 'perp.order_frozen' },
  };
  const family = {
    slug: 'perp-x',
    key: 'gmxV2',
    chains: ['arbitrum'],
    config: z.object({}),
    endpoints: [
      { kind: 'action', path: 'orders', input: z.object({}), plan: async () => ({ calls: [], tokens: [] }), follow },
      { kind: 'action', path: 'plain', input: z.object({}), plan: async () => ({ calls: [], tokens: [] }) },
    ],
  } as unknown as AnyFamily;
  return {
    worker,
    family,
    queries,
    receipts,
    settle(key: Hex, s: Omit<OrderSettlement, 'blockNumber'>) {
      head += 3n;
      settlements.set(key, { ...s, blockNumber: head });
    },
  };
}

describe('order controller (embedded store, a scripted chain)', () => {
  let dir: string;
  let store: EmbeddedStore;
  let informer: Informer<'ExecutionRequest'>;
  let orders: OrderController | undefined;
  let chain: ReturnType<typeof scriptedChain>;

  beforeEach(async () => {
    dir = tempDir('aw-orders-');
    store = await openEmbeddedStore({ dir: join(dir, 'store'), fsync: false });
    informer = new Informer({ store, kind: 'ExecutionRequest', namespace: 'default' });
    chain = scriptedChain();
  });
  afterEach(async () => {
    await orders?.stop();
    orders = undefined;
    await informer.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async () => {
    orders = await startOrderController({
      store,
      informer,
      workers: new Map([['arbitrum', chain.worker]]),
      protocols: new Map<'arbitrum', ProtocolsConfig>([['arbitrum', { gmxV2: {} as never }]]),
      families: [chain.family],
      pollMs: 20,
    });
  };

  /** A confirmed request of `action` whose operation's logs (in a bundle with another operation) hold `logs`. */
  async function confirmed(name: string, action: string, logs: (at: number) => ReceiptLog[], phase: ExecutionRequestStatus['phase'] = 'Confirmed'): Promise<ExecutionRequest> {
    const userOpHash = hash(name.slice(-1).repeat(2).padEnd(2, '0').slice(0, 2));
    const txHash = hash('7' + name.slice(-1));
    const other = hash('99');
    chain.receipts.set(txHash, {
      transactionHash: txHash,
      status: 'success',
      blockNumber: 90n,
      blockHash: hash('bb'),
      blockTimestamp: 1n,
      from: PROTOCOL,
      confirmations: 1n,
      // Another operation of the bundle created an order first: only this operation's own logs count.
      logs: [{ address: ENTRY_POINT, topics: [BEFORE], data: '0x', logIndex: 0 }, created(hash('ee'), 1), opLog(other, 2), ...logs(3), opLog(userOpHash, 3 + logs(3).length)],
    });
    const r = await store.create({
      ...executionRequest(name, 'client-1', { chain: 'arbitrum', callbackUrl: 'https://hooks.example/agent' }),
      spec: {
        ...executionRequest(name, 'client-1', { chain: 'arbitrum', callbackUrl: 'https://hooks.example/agent' }).spec,
        action: { name: action, input: {}, inputHash: 'a'.repeat(64) },
      },
    });
    const op = {
      sender: PROTOCOL,
      nonce: '0',
      callData: '0x',
      callGasLimit: '1',
      verificationGasLimit: '1',
      preVerificationGas: '1',
      maxFeePerGas: '1',
      maxPriorityFeePerGas: '1',
      signature: '0x',
      hash: userOpHash,
      entryPoint: ENTRY_POINT,
      chainId: 421614,
    };
    return store.updateStatus({ ...r, status: { phase, txHash, blockNumber: '90', userOperation: op } });
  }
  const orderOf = async (name: string) => (await store.get('ExecutionRequest', name)).status?.order;

  it('finds the order in its own operation’s logs, follows it to execution, and records the event in the same write', async () => {
    const key = hash('0a');
    await confirmed('req-1', 'perp-x/orders', (at) => [created(key, at)]);
    await start();
    const pending = await waitFor(async () => (await orderOf('req-1'))?.state === 'Pending' ? orderOf('req-1') : undefined);
    expect(pending).toMatchObject({ key, state: 'Pending' });
    // Polls search on from where they stopped, in bounded queries from the create's block.
    await waitFor(async () => (chain.queries.length >= 2 ? true : undefined));
    expect(chain.queries[0]!.fromBlock).toBe(90n);
    expect(chain.queries[1]!.fromBlock).toBe(101n);

    chain.settle(key, { state: 'Executed', fillPrice: '3001.5', txHash: hash('c1') });
    const done = await waitFor(async () => (await orderOf('req-1'))?.state === 'Executed' ? store.get('ExecutionRequest', 'req-1') : undefined);
    expect(done.status?.phase).toBe('Confirmed');
    expect(done.status?.order).toMatchObject({ key, state: 'Executed', fillPrice: '3001.5', txHash: hash('c1'), blockNumber: '103' });
    const events = done.status?.webhookEvents ?? [];
    // The confirmation's own event first (the request was written without its list: it is owed all the same).
    expect(events.map((e) => e.event)).toEqual(['execution.confirmed', 'perp.order_executed']);
    const body = JSON.parse(events[1]!.body) as { id: string; type: string; data: { status: string; order: Record<string, unknown> } };
    expect(body).toMatchObject({ id: 'evt_req-1_2', type: 'perp.order_executed', data: { status: 'confirmed', order: { key, state: 'executed', fill_price: '3001.5', reason: null } } });
    // Final: no more searching.
    const asked = chain.queries.length;
    await sleep(100);
    expect(chain.queries.length).toBe(asked);
  });

  it('tells a cancel with its reason, a freeze and then an execution as three events', async () => {
    const cancelled = hash('0b');
    const frozen = hash('0c');
    await confirmed('req-2', 'perp-x/orders', (at) => [created(cancelled, at)]);
    await confirmed('req-3', 'perp-x/orders', (at) => [created(frozen, at)]);
    await start();
    await waitFor(async () => ((await orderOf('req-2')) && (await orderOf('req-3')) ? true : undefined));
    chain.settle(cancelled, { state: 'Cancelled', reason: 'OrderNotFulfillableAtAcceptablePrice', txHash: hash('c2') });
    chain.settle(frozen, { state: 'Frozen', reason: 'InsufficientCollateralUsd', txHash: hash('c3') });
    expect(await waitFor(async () => ((await orderOf('req-2'))?.state === 'Cancelled' ? orderOf('req-2') : undefined))).toMatchObject({
      reason: 'OrderNotFulfillableAtAcceptablePrice',
    });
    await waitFor(async () => ((await orderOf('req-3'))?.state === 'Frozen' ? true : undefined));
    // Frozen is not final: still followed.
    chain.settle(frozen, { state: 'Executed', fillPrice: '2990', txHash: hash('c4') });
    const r3 = await waitFor(async () => ((await orderOf('req-3'))?.state === 'Executed' ? store.get('ExecutionRequest', 'req-3') : undefined));
    expect(r3.status?.webhookEvents?.map((e) => [e.id, e.event])).toEqual([
      ['evt_req-3', 'execution.confirmed'],
      ['evt_req-3_2', 'perp.order_frozen'],
      ['evt_req-3_3', 'perp.order_executed'],
    ]);
  });

  it('leaves alone a request of an action that is not followed, one not confirmed, and an operation that created no order', async () => {
    await confirmed('req-4', 'perp-x/plain', (at) => [created(hash('0d'), at)]);
    await confirmed('req-5', 'perp-x/orders', (at) => [created(hash('0e'), at)], 'Broadcasting');
    await confirmed('req-6', 'perp-x/orders', () => []);
    await start();
    await sleep(200);
    for (const name of ['req-4', 'req-5', 'req-6']) expect(await orderOf(name)).toBeUndefined();
    expect(chain.queries).toEqual([]);
  });
});
