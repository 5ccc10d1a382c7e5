/**
 * The bundler's part of a request's trace (src/lib/tracing.ts): the context an operation was submitted in is kept
 * with its pool entry, and when a bundle transaction carrying it is sent, two spans join that trace:
 *   bundle.wait  submitted → the bundle transaction carrying it is handed to the node (fees, bundle simulation, lock)
 *   bundle.send  handed to the node → its receipt (the inclusion: with eth_sendRawTransactionSync, one call)
 */
import type { Context } from '@opentelemetry/api';
import { activeContext, epochMs, recordSpan, TRACERS } from '../../lib/tracing.ts';

export interface SubmittedTrace {
  ctx: Context;
  at: number;
}

/** What a pool entry keeps of the submit's trace; undefined when tracing is off or the submit was in no trace. */
export function submittedTrace(): SubmittedTrace | undefined {
  const ctx = activeContext();
  return ctx && { ctx, at: epochMs() };
}

/** Records bundle.wait and bundle.send for each traced operation of a bundle sent from `sentAt` until now. */
export function recordBundleSent(entries: readonly { trace?: SubmittedTrace | undefined }[], sentAt: number, result: string): void {
  const now = epochMs();
  for (const e of entries) {
    if (!e.trace) continue;
    recordSpan(TRACERS.chainWorker, 'bundle.wait', e.trace.at, sentAt, e.trace.ctx);
    recordSpan(TRACERS.chainWorker, 'bundle.send', sentAt, now, e.trace.ctx, { 'agentwallet.bundle.operations': entries.length, 'agentwallet.bundle.result': result });
  }
}
