import { isTerminal, type ExecutionRequest, type SignedUserOperation } from '../../api/v1alpha1/index.ts';
import { isChainError } from '../../chain/errors.ts';
import type { ChainWorker } from '../../chain/types.ts';
import type { ChainName } from '../../config/chains.ts';
import type { ResourceStore } from '../../store/types.ts';

/** The signed operation of a request that has not finished: its nonce is taken until the request settles. */
export const inFlightOperation = (r: ExecutionRequest): SignedUserOperation | undefined =>
  isTerminal(r.status?.phase) ? undefined : r.status?.userOperation;

export interface InFlightRestorer {
  /** Gives the chain's worker every signed operation still in flight. Concurrent calls for one chain share one read. */
  restore(chain: ChainName): Promise<void>;
}

/**
 * Tells chain workers which signed operations are in flight: once at start, and again whenever a worker
 * answers not_restored (it restarted in its own process and forgot them). Read from the store, not the
 * informer, so an operation written a moment ago is not missed.
 */
export function createInFlightRestorer(store: ResourceStore, namespace: string, workers: ReadonlyMap<ChainName, ChainWorker>): InFlightRestorer {
  const running = new Map<ChainName, Promise<void>>();
  return {
    restore(chain) {
      let p = running.get(chain);
      if (!p) {
        p = (async () => {
          const { items } = await store.list('ExecutionRequest', { namespace });
          const ops = items.filter((r) => r.spec.chain === chain).flatMap((r) => inFlightOperation(r) ?? []);
          await workers.get(chain)?.restoreInFlight(ops);
        })().finally(() => running.delete(chain));
        running.set(chain, p);
      }
      return p;
    },
  };
}

/**
 * The worker as the reconciler uses it: a prepareOperation refused with not_restored (the worker restarted and
 * no longer knows which nonces are taken) restores the worker and is tried once more. Every other method is
 * the worker's own.
 */
export function withRestore(worker: ChainWorker, restore: () => Promise<void>): ChainWorker {
  return {
    chain: worker.chain,
    resolveWallet: (ref) => worker.resolveWallet(ref),
    getBalances: (ref) => worker.getBalances(ref),
    simulate: (ref, calls, opts) => worker.simulate(ref, calls, opts),
    async prepareOperation(ref, calls, opts) {
      try {
        return await worker.prepareOperation(ref, calls, opts);
      } catch (e) {
        if (!isChainError(e, 'not_restored')) throw e;
        await restore();
        return worker.prepareOperation(ref, calls, opts);
      }
    },
    submitOperation: (op) => worker.submitOperation(op),
    getCode: (address) => worker.getCode(address),
    isValidSignature: (account, digest, signature) => worker.isValidSignature(account, digest, signature),
    tokenBalance: (token, owner, block) => worker.tokenBalance(token, owner, block),
    authorizationState: (id) => worker.authorizationState(id),
    findAuthorizationUse: (id, lookbackBlocks) => worker.findAuthorizationUse(id, lookbackBlocks),
    getOperationOutcome: (op) => worker.getOperationOutcome(op),
    withdrawOperation: (op) => worker.withdrawOperation(op),
    restoreInFlight: (ops) => worker.restoreInFlight(ops),
    onOutcome: (listener) => worker.onOutcome(listener),
    ...(worker.onReconnect && { onReconnect: (listener: () => void) => worker.onReconnect!(listener) }),
    getHead: () => worker.getHead(),
    read: (calls, opts) => worker.read(calls, opts),
    getLogs: (query) => worker.getLogs(query),
    getFees: () => worker.getFees(),
    getTransactionReceipt: (hash) => worker.getTransactionReceipt(hash),
    senders: () => worker.senders(),
    close: () => worker.close(),
  };
}
