/**
 * Request traces (OpenTelemetry): one execute's timeline across the gateway, the controller and the chain worker.
 *
 * Off by default: nothing of the SDK is loaded, no exporter runs, and every helper here returns after one boolean
 * check (`@opentelemetry/api`'s no-op tracer is never even asked). On when the standard variable
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set and OTEL_SDK_DISABLED is not `true`,
 * or when a process calls startTracing itself (the bench). Spans go to an OTLP/HTTP (JSON) collector in batches.
 *
 * Context crosses processes as W3C trace context: the gateway writes `traceparent` on the ExecutionRequest (an
 * annotation, traceAnnotations), the controller continues it (reconcileInTrace), gRPC calls carry it as metadata
 * (injectInto / extractFrom), and the chain worker continues it. The span names are listed in docs/operations.md.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type ContextManager,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
} from '@opentelemetry/api';

export interface TracingSettings {
  /** The OTLP/HTTP traces URL (…/v1/traces). */
  url: string;
  /** `service.name`: one per role (agent-wallet-gateway, agent-wallet-controller, …). */
  serviceName: string;
  /** Share of new traces recorded, 0–1 (default 1); a trace begun upstream follows its parent's decision. */
  sampleRatio?: number;
  /** Batch export delay (default 1 s: the bench waits for spans; a collector does not mind). */
  exportDelayMs?: number;
}

/** The W3C trace context on an ExecutionRequest; absent when tracing was off at the gateway (or the trace unsampled). */
export const TRACEPARENT_ANNOTATION = 'agentwallet.dev/traceparent';
/** When the gateway sent the create (epoch ms, µs decimals): the start of the `queue` span. */
export const TRACE_QUEUED_ANNOTATION = 'agentwallet.dev/trace-queued-at';

let on = false;
let stopProvider: (() => Promise<void>) | undefined;
let flushProvider: (() => Promise<void>) | undefined;

/** Whether spans are being recorded in this process. The hot paths ask this first. */
export const tracingOn = (): boolean => on;

/**
 * The settings the OTEL_* variables give for `role`, or undefined (tracing off): OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
 * (used as is) or OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces), OTEL_SERVICE_NAME (default agent-wallet-<role>),
 * OTEL_TRACES_SAMPLER_ARG (the ratio of parentbased_traceidratio), OTEL_SDK_DISABLED=true turns it off.
 */
export function tracingSettingsFromEnv(role: string, env: NodeJS.ProcessEnv = process.env): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const url = traces || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (!url) return undefined;
  const ratio = env.OTEL_TRACES_SAMPLER_ARG === undefined ? undefined : Number(env.OTEL_TRACES_SAMPLER_ARG);
  return {
    url,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || `agent-wallet-${role}`,
    ...(ratio !== undefined && Number.isFinite(ratio) && { sampleRatio: Math.min(1, Math.max(0, ratio)) }),
  };
}

/**
 * Starts the SDK (once per process): a tracer provider with a parent-based ratio sampler and a batching OTLP/HTTP
 * exporter, the W3C propagator and an AsyncLocalStorage context manager, all registered globally. The SDK is
 * imported here, so a process with tracing off never loads it.
 */
export async function startTracing(settings: TracingSettings): Promise<void> {
  if (on) return;
  const [{ BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler }, { resourceFromAttributes }, { OTLPTraceExporter }, { W3CTraceContextPropagator }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/core'),
    ]);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName, 'service.instance.id': `${process.pid}` }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio ?? 1) }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url }), {
        scheduledDelayMillis: settings.exportDelayMs ?? 1_000,
        maxQueueSize: 8_192,
        maxExportBatchSize: 1_024,
      }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  on = true;
  stopProvider = () => provider.shutdown();
  flushProvider = () => provider.forceFlush();
}

/** Sends the spans batched so far now (the bench, before it reads them); a no-op when tracing is off. */
export async function flushTracing(): Promise<void> {
  await flushProvider?.();
}

/** Starts tracing when the OTEL_* variables ask for it; a no-op otherwise. Each process entry point calls this once. */
export async function startTracingFromEnv(role: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const settings = tracingSettingsFromEnv(role, env);
  if (settings) await startTracing(settings);
  return settings !== undefined;
}

/** Exports the spans still batched and stops (a role's graceful stop); a no-op when tracing is off. */
export async function stopTracing(): Promise<void> {
  const stop = stopProvider;
  stopProvider = undefined;
  flushProvider = undefined;
  on = false;
  await stop?.();
  trace.disable();
  propagation.disable();
  context.disable();
}

/** The tracers, one per layer (the span's instrumentation scope says which role made it in the embedded process). */
export const TRACERS = {
  gateway: 'agent-wallet/gateway',
  controller: 'agent-wallet/controller',
  chainWorker: 'agent-wallet/chain-worker',
} as const;
const tracerOf = (name: string): Tracer => trace.getTracer(name);

/**
 * Runs `fn` in a new span child of the active one, ending it when `fn` settles; a throw marks it an error. Without
 * an active span, `fn` runs untraced: work outside a request's trace (pollers, audits) makes no traces of its own.
 * `parent` (even an empty context) starts the span there instead: a trace's root (the gateway's execute).
 * With tracing off: `fn()`, nothing else.
 */
export function inSpan<T>(tracer: string, name: string, fn: (span: Span | undefined) => Promise<T>, attributes?: Attributes, parent?: Context): Promise<T> {
  if (!on) return fn(undefined);
  if (parent === undefined && trace.getSpanContext(context.active()) === undefined) return fn(undefined);
  // Times in sub-ms epoch (the SDK's default start is Date.now(), whole ms): spans of several processes line up.
  return tracerOf(tracer).startActiveSpan(name, { startTime: epochMs(), ...(attributes && { attributes }) }, parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (e) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message.slice(0, 200) : String(e) });
      throw e;
    } finally {
      span.end(epochMs());
    }
  });
}

/**
 * inSpan under a context received from another process (gRPC metadata): without a trace in it, `fn` runs under the
 * root context and no span is made (health checks and pollers do not start traces of their own).
 */
export function inRemoteSpan<T>(tracer: string, name: string, parent: Context, fn: () => Promise<T>, attributes?: Attributes): Promise<T> {
  if (!on) return fn();
  if (trace.getSpanContext(parent) === undefined) return context.with(ROOT_CONTEXT, fn);
  return inSpan(tracer, name, fn, attributes, parent);
}

/** A span measured elsewhere (times in epoch ms, e.g. Date.now() or epochMs()), child of `parent`. */
export function recordSpan(tracer: string, name: string, startMs: number, endMs: number, parent: Context, attributes?: Attributes): void {
  if (!on) return;
  tracerOf(tracer).startSpan(name, { startTime: startMs, ...(attributes && { attributes }) }, parent).end(endMs);
}

/** Now, in epoch ms with sub-ms decimals (Date.now() is whole ms). */
export const epochMs = (): number => performance.timeOrigin + performance.now();

/** The active context when a span is in it, to continue later from another callback (a bundle sent after the submit returned). */
export function activeContext(): Context | undefined {
  if (!on) return undefined;
  const ctx = context.active();
  return trace.getSpanContext(ctx) === undefined ? undefined : ctx;
}

/** Runs `fn` with `ctx` active (a context captured by activeContext); `fn()` when tracing is off or ctx is absent. */
export function withContext<T>(ctx: Context | undefined, fn: () => T): T {
  return on && ctx ? context.with(ctx, fn) : fn();
}

const setter: TextMapSetter<Record<string, string>> = { set: (c, k, v) => void (c[k] = v) };

/** The annotations that carry the active trace onto a new ExecutionRequest; none when tracing is off. */
export function traceAnnotations(): Record<string, string> {
  if (!on) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier, setter);
  if (carrier.traceparent === undefined) return {};
  return { [TRACEPARENT_ANNOTATION]: carrier.traceparent, [TRACE_QUEUED_ANNOTATION]: epochMs().toFixed(3) };
}

/** The context a resource's annotations carry (ROOT when none: work for an untraced request starts no trace). */
export function contextOfAnnotations(annotations: Readonly<Record<string, string>> | undefined): Context {
  const traceparent = annotations?.[TRACEPARENT_ANNOTATION];
  if (!on || traceparent === undefined) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

/**
 * One reconcile of a traced request, in its trace: a span `reconcile <phase>` child of the gateway's execute; the
 * first one (no phase yet) also records `queue`, from the gateway's create to this pick. An untraced request runs
 * under the root context, so it never joins a trace it does not belong to.
 */
export function reconcileInTrace<T>(
  /** The object reconciled (read only when tracing is on: the off path costs nothing). */
  read: () => { metadata: { annotations?: Record<string, string> | undefined }; status?: { phase?: string | undefined } | undefined } | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  if (!on) return fn();
  const obj = read();
  const parent = contextOfAnnotations(obj?.metadata.annotations);
  if (trace.getSpanContext(parent) === undefined) return context.with(ROOT_CONTEXT, fn);
  const phase = obj?.status?.phase ?? 'New';
  const queuedAt = Number(obj?.metadata.annotations?.[TRACE_QUEUED_ANNOTATION]);
  if (phase === 'New' && Number.isFinite(queuedAt)) recordSpan(TRACERS.controller, 'queue', queuedAt, epochMs(), parent);
  return inSpan(TRACERS.controller, `reconcile ${phase}`, fn, { 'agentwallet.phase': phase }, parent);
}

const metadataGetter = <C>(get: (c: C, key: string) => string | undefined): TextMapGetter<C> => ({
  get: (c, k) => get(c, k),
  keys: () => ['traceparent', 'tracestate'],
});

/** Writes the active trace context into an outgoing carrier (gRPC metadata): `set(key, value)`. */
export function injectInto(set: (key: string, value: string) => void): void {
  if (!on) return;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier, setter);
  for (const [k, v] of Object.entries(carrier)) set(k, v);
}

/** The trace context an incoming carrier (gRPC metadata) holds; ROOT when none. */
export function extractFrom<C>(carrier: C, get: (c: C, key: string) => string | undefined): Context {
  if (!on) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, carrier, metadataGetter(get));
}

/** The trace id of the active span (logs, tests); undefined when none is recording. */
export const activeTraceId = (): string | undefined => (on ? trace.getSpanContext(context.active())?.traceId : undefined);

/** @opentelemetry/api's ContextManager on AsyncLocalStorage (what sdk-trace-node's would be, without the package). */
class AsyncLocalContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.apply(thisArg, args));
  }

  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const run = (...args: unknown[]) => this.with(ctx, () => (target as (...a: unknown[]) => unknown)(...args));
    return run as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.#storage.disable();
    return this;
  }
}
