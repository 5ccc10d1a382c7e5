import type { ExecutionRequest } from '../../../api/v1alpha1/index.ts';
import type { ChainWorker, OperationOutcome } from '../../../chain/types.ts';
import type { ExecutionRequestStatus } from '../../../api/v1alpha1/index.ts';
import type { ReconcileResult } from '../../../runtime/index.ts';
import type { Reconciling } from '../context.ts';
import { withProtocolError } from '../protocolRevert.ts';
import { conditions, fail, write } from '../status.ts';

/** The operation's outcome: the one the worker pushed, else asked for (after a restart, or at a poll). */
export async function track(r: Reconciling, req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
  const op = req.status!.userOperation!; // Broadcasting always has one
  const outcome = r.deps.takePushedOutcome(op.hash) ?? (await worker.getOperationOutcome(op));
  const t = r.now();
  const s0 = req.status!;
  switch (outcome.state) {
    case 'pending':
      return { requeueAfterMs: r.pollMs };
    case 'unknown': {
      // Neither the bundler nor the chain has it: the worker restarted, or a reorg removed its inclusion.
      // Either way nothing used its nonce: send the same signed operation again.
      await worker.submitOperation(op);
      const reorged = s0.txHash !== undefined;
      return write(
        r,
        req,
        (s) => ({
          ...s,
          submitAttempts: (s.submitAttempts ?? 0) + 1,
          ...(reorged && {
            txHash: undefined,
            blockNumber: undefined,
            blockHash: undefined,
            conditions: conditions(s, t, {
              Submitted: ['True', 'Reorganized', `its inclusion in block ${s.blockNumber} was reorganised away; sent again`],
            }),
          }),
        }),
        { requeueAfterMs: r.pollMs },
      );
    }
    case 'dropped':
      // Withdrawn with an earlier operation of its wallet by the kill switch, which was lifted before this one looked.
      if (outcome.code === 'withdrawn') return fail(r, req, { code: 'agent_suspended', message: `${outcome.message}, with an earlier operation of its wallet, by the kill switch; nothing was executed` });
      if (s0.txHash === undefined) return fail(r, req, { code: outcome.code, message: outcome.message });
      // Its inclusion is gone and can never come back: the status must not keep pointing at it.
      return fail(
        r,
        req,
        { code: outcome.code, message: `its inclusion in block ${s0.blockNumber} was reorganised away, then: ${outcome.message}` },
        {},
        { txHash: undefined, blockNumber: undefined, blockHash: undefined },
      );
    case 'included': {
      if (outcome.confirmations < outcome.requiredConfirmations) {
        // In a block, not yet final. Record where (GET /status shows the tx hash) once per inclusion, then look
        // again: each look checks the block still holds it.
        const progress = `${outcome.confirmations} of ${outcome.requiredConfirmations} confirmations`;
        if (s0.blockHash === outcome.blockHash) return { requeueAfterMs: r.inclusionPollMs };
        return write(
          r,
          req,
          (s) => ({
            ...s,
            txHash: outcome.txHash,
            blockNumber: outcome.blockNumber,
            blockHash: outcome.blockHash,
            conditions: conditions(s, t, { Submitted: ['True', 'Included', `in block ${outcome.blockNumber}; ${progress}`] }),
          }),
          { requeueAfterMs: r.inclusionPollMs },
        );
      }
      return settle(r, req, outcome, t);
    }
  }
}

/** An inclusion at the chain's depth, in a block as the outcome says. */
export type FinalInclusion = Extract<OperationOutcome, { state: 'included' }>;
export const isFinal = (o: OperationOutcome | undefined): o is FinalInclusion => o?.state === 'included' && o.confirmations >= o.requiredConfirmations;

/**
 * The terminal write of an inclusion at depth: Confirmed, or Reverted (an auto fee that rode in it reverted too).
 * `before` changes the status first (submit.ts: the Broadcasting it went through without a write of its own).
 */
export function settle(
  r: Reconciling,
  req: ExecutionRequest,
  outcome: FinalInclusion,
  t: Date,
  before: (s: ExecutionRequestStatus) => ExecutionRequestStatus = (s) => s,
): Promise<ReconcileResult> {
  const success = outcome.success;
  // The auto transfer rode in the operation: a reverted operation reverted it too, so nothing was charged.
  const charged = !success && req.status?.payment?.paid?.method === 'auto' ? { costUsd: 0 } : {};
  return write(r, req, (current) => {
    const s = before(current);
    return {
      ...s,
      ...charged,
      phase: success ? 'Confirmed' : 'Reverted',
      txHash: outcome.txHash,
      blockNumber: outcome.blockNumber,
      blockHash: outcome.blockHash,
      gasUsed: outcome.actualGasUsed,
      actualGasCostWei: outcome.actualGasCostWei,
      completionTime: t.toISOString(),
      ...(!success && {
        failure: withProtocolError(req, {
          code: 'execution_reverted',
          message: outcome.revertReason ?? 'the call reverted on chain',
          ...(outcome.revertReason !== undefined && { revertReason: outcome.revertReason }),
          ...(outcome.revertData !== undefined && { revertData: outcome.revertData }),
        }),
      }),
      conditions: conditions(s, t, {
        Succeeded: success
          ? ['True', 'Confirmed', `included in block ${outcome.blockNumber}; ${outcome.confirmations} confirmations`]
          : ['False', 'Reverted', outcome.revertReason ?? 'the call reverted on chain'],
      }),
    };
  });
}
