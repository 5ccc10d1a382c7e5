import type { Hex } from 'viem';
import { isFinalOrderState, type ExecutionRequest, type ProtocolOrder } from '../../api/v1alpha1/index.ts';
import { operationLogs } from '../../chain/operationLogs.ts';
import type { ChainWorker } from '../../chain/types.ts';
import type { ChainName } from '../../config/chains.ts';
import { findAction } from '../../protocols/action.ts';
import { ProtocolError } from '../../protocols/common/errors.ts';
import type { ProtocolsConfig } from '../../protocols/config.ts';
import { familyContext } from '../../protocols/context.ts';
import type { AnyFamily, OrderFollow, OrderSettlement } from '../../protocols/types.ts';
import { Controller, retryOnConflict, type ControllerHooks, type Informer, type Logger, type ReconcileResult } from '../../runtime/index.ts';
import type { ControllerMetrics } from '../../runtime/controller.ts';
import { isStoreError, type ResourceStore } from '../../store/types.ts';
import { withOrderEvent } from '../../webhooks/eventLog.ts';

export interface OrderControllerOptions {
  store: ResourceStore;
  /** The manager's shared ExecutionRequest informer. */
  informer: Informer<'ExecutionRequest'>;
  workers: ReadonlyMap<ChainName, ChainWorker>;
  protocols: ReadonlyMap<ChainName, ProtocolsConfig>;
  families: readonly AnyFamily[];
  /**
   * How often a pending order's logs are searched again while it is young (default 250 ms: a market order is settled
   * within seconds, and the agent waits for it); after FAST_WINDOW_MS, every SLOW_POLL_MS (a limit order may wait
   * for its price for days).
   */
  pollMs?: number | undefined;
  /** Orders followed at once (default 8): each is a log query or two. */
  concurrency?: number;
  hooks?: ControllerHooks;
  metrics?: ControllerMetrics | undefined;
  logger?: Logger | undefined;
}

export interface OrderController {
  controller: Controller<'ExecutionRequest'>;
  stop(): Promise<void>;
}

export const ORDER_POLL_MS = 250;
/** How long an order is searched for at pollMs; older ones at SLOW_POLL_MS (a search is one log query). */
const FAST_WINDOW_MS = 30_000;
const SLOW_POLL_MS = 5_000;

/** The follow declaration of a request's action, when its protocol settles what it created later. */
function followOf(r: ExecutionRequest, families: readonly AnyFamily[]): { family: AnyFamily; follow: OrderFollow<never> } | undefined {
  const action = r.spec.action;
  if (!action) return undefined;
  const found = findAction(families, action.name);
  return found?.endpoint.follow ? { family: found.family, follow: found.endpoint.follow as OrderFollow<never> } : undefined;
}

/** Whether the controller has anything to do for a request: confirmed, of a followed action, its order not final. */
const followed = (r: ExecutionRequest, families: readonly AnyFamily[]): boolean =>
  r.status?.phase === 'Confirmed' && !isFinalOrderState(r.status.order?.state) && followOf(r, families) !== undefined;

/**
 * Follows the orders confirmed requests created, for protocols that settle them later (ActionEndpoint.follow; a GMX
 * order, which a keeper executes or cancels after the create is mined). The request stays Confirmed (its operation
 * is); what the keeper did goes in status.order, in the same write as its own webhook event (perp.order_executed …).
 *
 * The order is found in the logs of the request's own operation (its bundle's receipt, from the last
 * UserOperationEvent before it), then its settlement is searched for in the protocol's logs from the create's
 * block on, every pollMs while it is young and every few seconds after, one bounded log query per order. How far
 * the search went is kept in memory only: a status write per poll would cost the store as much as the request
 * itself; after a restart the search starts again at the create's block, which finds the same settlement (the
 * write is skipped when nothing changed).
 *
 * Run it on the leader only, like every controller of the manager.
 */
export async function startOrderController(opts: OrderControllerOptions): Promise<OrderController> {
  const pollMs = opts.pollMs ?? ORDER_POLL_MS;
  const { store, informer, families } = opts;
  /** Per request (namespace/name): the next block to search from. */
  const cursors = new Map<string, bigint>();

  async function reconcile(ns: string, name: string): Promise<ReconcileResult> {
    const key = `${ns}/${name}`;
    const cached = informer.peek(name, ns); // read only (frozen, no copy)
    if (!cached || !followed(cached, families)) {
      cursors.delete(key);
      return { done: true };
    }
    const { family, follow } = followOf(cached, families)!;
    const worker = opts.workers.get(cached.spec.chain);
    const status = cached.status!;
    if (!worker || status.txHash === undefined || status.blockNumber === undefined) return { done: true };
    let ctx;
    try {
      ctx = familyContext(family, cached.spec.chain, worker, opts.protocols.get(cached.spec.chain));
    } catch (e) {
      if (e instanceof ProtocolError) {
        opts.logger?.warn({ request: name, err: e }, 'the order of this request is not followed: its protocol is not configured here');
        return { done: true };
      }
      throw e;
    }

    if (status.order === undefined) {
      const op = status.userOperation;
      const receipt = await worker.getTransactionReceipt(status.txHash as Hex);
      // Not found: the inclusion is being looked at again by the execution controller; its next write brings us back.
      if (!receipt || !op) return { requeueAfterMs: pollMs };
      const created = follow.created(ctx, operationLogs(receipt.logs, op.entryPoint as `0x${string}`, op.hash as Hex));
      if (!created) {
        opts.logger?.warn({ request: name, txHash: status.txHash }, 'the confirmed operation created no order to follow');
        return { done: true };
      }
      const order: ProtocolOrder = { key: created.key, state: 'Pending', time: new Date().toISOString() };
      await writeOrder(cached, order, undefined);
      cursors.set(key, BigInt(status.blockNumber));
      return { requeueAfterMs: pollMs };
    }

    const from = cursors.get(key) ?? BigInt(status.blockNumber);
    const found = await follow.settled(ctx, status.order.key as Hex, from);
    cursors.set(key, found.searchedTo + 1n);
    const s = found.settlement;
    if (s && (s.state !== status.order.state || s.txHash !== status.order.txHash)) {
      await writeOrder(cached, settledOrder(status.order, s), follow.events[s.state]);
      if (isFinalOrderState(s.state)) {
        cursors.delete(key);
        return { done: true };
      }
    }
    const age = Date.now() - Date.parse(status.order.time);
    return { requeueAfterMs: age < FAST_WINDOW_MS ? pollMs : Math.max(pollMs, SLOW_POLL_MS) };
  }

  /** status.order set to `order` (and its event appended) on the stored request, unless it already says so. */
  async function writeOrder(cached: ExecutionRequest, order: ProtocolOrder, event: Parameters<typeof withOrderEvent>[2] | undefined): Promise<void> {
    await retryOnConflict(async () => {
      let current: ExecutionRequest;
      try {
        current = await store.get('ExecutionRequest', cached.metadata.name, cached.metadata.namespace);
      } catch (e) {
        if (isStoreError(e, 'NotFound')) return;
        throw e;
      }
      const had = current.status?.order;
      if (current.status?.phase !== 'Confirmed' || (had && had.state === order.state && had.txHash === order.txHash) || isFinalOrderState(had?.state)) return;
      if (had && had.key !== order.key) return;
      const next = { ...current.status, order };
      await store.updateStatus({ ...current, status: event ? withOrderEvent(current, next, event, order.time) : next });
    });
  }

  const controller = new Controller<'ExecutionRequest'>({
    name: 'orders',
    informer,
    reconcile: ({ namespace: ns, name }) => reconcile(ns, name),
    concurrency: opts.concurrency ?? 8,
    // A request becomes followed when it is confirmed; our own writes requeue themselves.
    updatePredicate: (a, b) => a.status?.phase !== b.status?.phase || a.status?.txHash !== b.status?.txHash,
    ...(opts.hooks && { hooks: opts.hooks }),
    ...(opts.metrics && { metrics: opts.metrics }),
    ...(opts.logger && { logger: opts.logger }),
  });
  await controller.start();
  return {
    controller,
    async stop() {
      await controller.stop({ drain: false });
    },
  };
}

/** The order after a settlement: its state, price and reason now, and the keeper's transaction. */
function settledOrder(before: ProtocolOrder, s: OrderSettlement): ProtocolOrder {
  return {
    key: before.key,
    state: s.state,
    time: new Date().toISOString(),
    ...(s.fillPrice !== undefined && { fillPrice: s.fillPrice }),
    ...(s.reason !== undefined && { reason: s.reason }),
    txHash: s.txHash,
    blockNumber: s.blockNumber.toString(),
  };
}
