/**
 * What the trace tests read in a receiver's spans (test/support/otlpReceiver.ts): one request's trace, by the
 * traceparent annotation its ExecutionRequest carries, once it holds the spans named.
 */
import type { ResourceStore } from '../../src/store/types.ts';
import { TRACEPARENT_ANNOTATION } from '../../src/lib/tracing.ts';
import type { OtlpReceiver, ReceivedSpan } from './otlpReceiver.ts';
import { until } from './until.ts';

/** The spans every sponsored execute's trace holds, through to the Confirmed status write. */
export const REQUEST_SPANS = [
  'execute',
  'store.create',
  'queue',
  'reconcile New',
  'admission.simulation',
  'admission.payment',
  'worker.simulate',
  'worker.sign',
  'status Queued',
  'worker.submit',
  'bundle.wait',
  'bundle.send',
  'status Confirmed',
] as const;

/** The trace id on the request's annotation, and its spans once all of `names` arrived (other processes export every second). */
export async function requestTrace(
  receiver: OtlpReceiver,
  store: ResourceStore,
  requestId: string,
  namespace?: string,
  names: readonly string[] = REQUEST_SPANS,
): Promise<{ traceId: string; spans: ReceivedSpan[]; one(name: string): ReceivedSpan }> {
  const req = await store.get('ExecutionRequest', requestId, namespace);
  const traceparent = req.metadata.annotations?.[TRACEPARENT_ANNOTATION];
  if (!traceparent) throw new Error(`${requestId} carries no ${TRACEPARENT_ANNOTATION} annotation`);
  const traceId = traceparent.split('-')[1]!;
  const spans = await until(
    `the spans of ${requestId}`,
    async () => {
      const mine = receiver.spans.filter((s) => s.traceId === traceId);
      return names.every((n) => mine.some((s) => s.name === n)) ? mine : undefined;
    },
    20_000,
  );
  const one = (name: string) => {
    const found = spans.filter((s) => s.name === name);
    if (found.length !== 1) throw new Error(`${found.length} spans named ${name}`);
    return found[0]!;
  };
  return { traceId, spans, one };
}
