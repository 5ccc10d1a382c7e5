import type { ExecutionRequest } from '../../../api/v1alpha1/index.ts';
import type { ChainWorker } from '../../../chain/types.ts';
import type { ReconcileResult } from '../../../runtime/index.ts';
import type { Reconciling } from '../context.ts';
import { judgeInclusion, recordChange } from '../inclusionJudge.ts';
import { conditions, fail, write, type ConditionChange } from '../status.ts';

/**
 * A finished request whose transaction was not found in the block its status names: what has its inclusion
 * become (inclusionJudge.ts)? Each outcome is one status write, recorded in status.inclusionChanges and a
 * condition; leaving the terminal phase records the event execution.inclusion_lost (write → eventLog).
 */
export async function recheckInclusion(r: Reconciling, req: ExecutionRequest, worker: ChainWorker): Promise<ReconcileResult> {
  const { namespace = 'default', name } = req.metadata;
  const settle = (result: ReconcileResult): ReconcileResult => {
    r.deps.inclusionSuspects?.delete(namespace, name);
    return result;
  };
  const s0 = req.status!;
  if (!s0.userOperation || s0.txHash === undefined || (s0.phase !== 'Confirmed' && s0.phase !== 'Reverted')) return settle({ done: true });
  const verdict = await judgeInclusion(req, worker, r.deps.payments[req.spec.paymentMode]);
  const t = r.now();
  const time = t.toISOString();
  switch (verdict.kind) {
    case 'intact':
      return settle({ done: true });
    case 'wait':
      return { requeueAfterMs: verdict.ms };
    case 'moved': {
      const o = verdict.outcome;
      const detail =
        o.blockNumber === s0.blockNumber
          ? `block ${s0.blockNumber} was replaced by another (${o.blockHash}) that includes it again (transaction ${o.txHash})`
          : `its inclusion moved from block ${s0.blockNumber} to block ${o.blockNumber} (transaction ${o.txHash}): the chain included it again`;
      r.deps.onInclusionChange?.(req, 'moved', verdict.paymentLost === undefined ? detail : `${detail}; but ${verdict.paymentLost}`);
      return settle(
        await write(r, req, (s) => ({
          ...s,
          txHash: o.txHash,
          blockNumber: o.blockNumber,
          blockHash: o.blockHash,
          gasUsed: o.actualGasUsed,
          actualGasCostWei: o.actualGasCostWei,
          inclusionChanges: recordChange(s, { kind: 'Moved', newTxHash: o.txHash, newBlockNumber: o.blockNumber, newBlockHash: o.blockHash, time }),
          conditions: conditions(s, t, {
            Submitted: ['True', 'InclusionMoved', detail],
            ...(verdict.paymentLost !== undefined && { PaymentSatisfied: ['False', 'PaymentLost', verdict.paymentLost] as ConditionChange }),
          }),
        })),
      );
    }
    case 'reopen': {
      const o = verdict.outcome;
      r.deps.onInclusionChange?.(req, 'resent', verdict.why);
      // The auto transfer rides in the operation: sent again with it, it is charged again if it succeeds.
      const auto = s0.payment?.paid?.method === 'auto' && s0.payment.quote !== undefined ? { costUsd: s0.payment.quote.amountUsd } : {};
      return settle(
        await write(r, req, (s) => ({
          ...s,
          ...auto,
          phase: 'Broadcasting',
          txHash: o?.txHash,
          blockNumber: o?.blockNumber,
          blockHash: o?.blockHash,
          gasUsed: undefined,
          actualGasCostWei: undefined,
          completionTime: undefined,
          failure: undefined,
          inclusionChanges: recordChange(s, { kind: 'Lost', time }),
          conditions: conditions(s, t, {
            Submitted: ['True', 'InclusionLost', verdict.why],
            Succeeded: ['Unknown', 'InclusionLost', verdict.why],
          }),
        })),
      );
    }
    case 'fail': {
      const code = verdict.failure.code;
      r.deps.onInclusionChange?.(req, code === 'payment_lost' ? 'payment_lost' : 'inclusion_lost', verdict.failure.message);
      const lost = {
        txHash: undefined,
        blockNumber: undefined,
        blockHash: undefined,
        gasUsed: undefined,
        actualGasCostWei: undefined,
        inclusionChanges: recordChange(s0, { kind: 'Lost', time }),
      };
      const submitted: ConditionChange = ['False', 'InclusionLost', verdict.failure.message];
      if (code !== 'payment_lost') {
        // Not executed: an auto fee rode in the operation and is not charged; a payment by transfer still on chain
        // stays the caller's, as fail() leaves it (a credit).
        const charged = s0.payment?.paid?.method === 'auto' ? { costUsd: 0 } : {};
        return settle(await fail(r, req, verdict.failure, { Submitted: submitted }, { ...charged, ...lost }));
      }
      // The payment is gone with the inclusion: nothing was paid, nothing is charged, and no credit is left.
      return settle(
        await write(r, req, (s) => ({
          ...s,
          ...lost,
          costUsd: 0,
          phase: 'Failed',
          failure: verdict.failure,
          completionTime: time,
          conditions: conditions(s, t, {
            Submitted: submitted,
            PaymentSatisfied: ['False', 'PaymentLost', verdict.failure.message],
            Succeeded: ['False', 'PaymentLost', verdict.failure.message],
          }),
        })),
      );
    }
  }
}
