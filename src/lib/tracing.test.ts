import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { startOtlpReceiver } from '../../test/support/otlpReceiver.ts';
import { until } from '../../test/support/until.ts';
import {
  contextOfAnnotations,
  flushTracing,
  inSpan,
  reconcileInTrace,
  startTracingFromEnv,
  stopTracing,
  traceAnnotations,
  tracingOn,
  tracingSettingsFromEnv,
  TRACEPARENT_ANNOTATION,
  TRACERS,
} from './tracing.ts';

afterEach(async () => {
  await stopTracing();
});

describe('tracingSettingsFromEnv', () => {
  it('is off without an OTLP endpoint, or with OTEL_SDK_DISABLED=true', () => {
    expect(tracingSettingsFromEnv('gateway', {})).toBeUndefined();
    expect(tracingSettingsFromEnv('gateway', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' })).toBeUndefined();
  });

  it('takes the endpoint (+ /v1/traces) or the traces endpoint as is, the service name per role, and the sampling ratio', () => {
    expect(tracingSettingsFromEnv('controller', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toEqual({
      url: 'http://c:4318/v1/traces',
      serviceName: 'agent-wallet-controller',
      sampleRatio: 0.25,
    });
    expect(
      tracingSettingsFromEnv('gateway', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/x', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SERVICE_NAME: 'gw' }),
    ).toEqual({ url: 'http://t:9/x', serviceName: 'gw' });
  });
});

describe('tracing off', () => {
  it('starts no exporter: a live collector named in the environment hears nothing while OTEL_SDK_DISABLED=true, and spans once it is not', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SDK_DISABLED: 'true' };
      expect(await startTracingFromEnv('gateway', env)).toBe(false);
      expect(tracingOn()).toBe(false);
      // The API's no-op tracer: nothing records, and no trace crosses onto a request.
      expect(trace.getTracer('x').startSpan('y').isRecording()).toBe(false);
      let seen: unknown = 'not called';
      await inSpan(
        TRACERS.gateway,
        'execute',
        async (span) => {
          seen = span;
          expect(traceAnnotations()).toEqual({});
        },
        undefined,
        ROOT_CONTEXT,
      );
      expect(seen).toBeUndefined();
      await flushTracing();
      expect(receiver.requests).toBe(0);

      // The same environment without the switch: the same code sends spans (so the zero above is meaningful).
      expect(await startTracingFromEnv('gateway', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint })).toBe(true);
      await inSpan(TRACERS.gateway, 'execute', async () => undefined, undefined, ROOT_CONTEXT);
      await flushTracing();
      await until('the span', async () => (receiver.spans.length > 0 ? true : undefined), 10_000);
      expect(receiver.spans.map((s) => [s.name, s.service, s.scope])).toEqual([['execute', 'agent-wallet-gateway', TRACERS.gateway]]);
    } finally {
      await receiver.close();
    }
  });
});

describe('tracing on', () => {
  it('carries the trace on a request’s annotations; the reconcile continues it and records the queue wait', async () => {
    const receiver = await startOtlpReceiver();
    try {
      expect(await startTracingFromEnv('embedded', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint })).toBe(true);
      const annotations = await inSpan(TRACERS.gateway, 'execute', async () => traceAnnotations(), undefined, ROOT_CONTEXT);
      expect(annotations[TRACEPARENT_ANNOTATION]).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      await reconcileInTrace(() => ({ metadata: { annotations } }), () => inSpan(TRACERS.controller, 'admission.simulation', async () => undefined));
      // An untraced request joins no trace, even from inside another one's span, and starts none.
      await inSpan(TRACERS.gateway, 'other', async () => undefined, undefined, contextOfAnnotations({}));
      await inSpan(TRACERS.gateway, 'other', () => reconcileInTrace(() => ({ metadata: {} }), () => inSpan(TRACERS.controller, 'untraced', async () => undefined)), undefined, ROOT_CONTEXT);
      await inSpan(TRACERS.controller, 'untraced', async () => undefined); // no active span: no root of its own
      expect(trace.getSpanContext(contextOfAnnotations({}))).toBeUndefined();
      await flushTracing();
      const byName = await until('the spans', async () => {
        const m = new Map(receiver.spans.map((s) => [s.name, s]));
        return ['execute', 'queue', 'reconcile New', 'admission.simulation', 'other'].every((n) => m.has(n)) ? m : undefined;
      }, 10_000);
      const execute = byName.get('execute')!;
      const traceId = execute.traceId;
      expect(annotations[TRACEPARENT_ANNOTATION]).toBe(`00-${traceId}-${execute.spanId}-01`);
      expect(byName.get('queue')).toMatchObject({ traceId, parentSpanId: execute.spanId });
      expect(byName.get('reconcile New')).toMatchObject({ traceId, parentSpanId: execute.spanId });
      expect(byName.get('admission.simulation')).toMatchObject({ traceId, parentSpanId: byName.get('reconcile New')!.spanId });
      expect(byName.has('untraced')).toBe(false);
      expect(receiver.spans.filter((s) => s.name === 'other')).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });
});
