import { InterceptingCall, ServerInterceptingCall, status, type Interceptor, type ServerInterceptor } from '@grpc/grpc-js';
import { BoundedLabel, OTHER } from './labels.ts';
import type { Metrics } from './registry.ts';

export type GrpcSide = 'server' | 'client';

/** Full method names (`/chainworker.v1.ChainWorker/Simulate`); bounded per side in case a caller passes data. */
const methodLabels = new WeakMap<Metrics, Record<GrpcSide, BoundedLabel>>();
const METHOD = /^\/[A-Za-z_][\w.]*\/[A-Za-z_]\w*$/;

/** A gRPC status code's name (`OK`, `DEADLINE_EXCEEDED`), as grpc-go's and grpc-java's metrics label it. */
export function grpcCodeName(code: number | string): string {
  if (typeof code === 'string') return code in status && typeof status[code as keyof typeof status] === 'number' ? code : OTHER;
  return status[code] ?? OTHER;
}

/**
 * Records one finished gRPC call: `agentwallet_grpc_<side>_handled_total{method,code}` and
 * `agentwallet_grpc_<side>_handling_seconds{method}`. For code that cannot use the interceptors below.
 */
export function observeGrpcCall(metrics: Metrics, side: GrpcSide, method: string, code: number | string, seconds: number): void {
  let labels = methodLabels.get(metrics);
  if (!labels) methodLabels.set(metrics, (labels = { server: new BoundedLabel(100, METHOD), client: new BoundedLabel(100, METHOD) }));
  const m = labels[side].value(method);
  const c = grpcCodeName(code);
  if (side === 'server') {
    metrics.grpcServerHandled.inc({ method: m, code: c });
    metrics.grpcServerHandling.observe({ method: m }, seconds);
  } else {
    metrics.grpcClientHandled.inc({ method: m, code: c });
    metrics.grpcClientHandling.observe({ method: m }, seconds);
  }
}

/**
 * For `new grpc.Server({ interceptors: [grpcServerInterceptor(metrics)] })`: every call served is recorded
 * once, with the status sent, or CANCELLED when the client went away (deadline passed, or cancelled) first.
 */
export function grpcServerInterceptor(metrics: Metrics): ServerInterceptor {
  return (descriptor, call) => {
    const started = performance.now();
    let recorded = false;
    const record = (code: number) => {
      if (recorded) return;
      recorded = true;
      observeGrpcCall(metrics, 'server', descriptor.path, code, (performance.now() - started) / 1000);
    };
    return new ServerInterceptingCall(call, {
      start: (next) => next({ onCancel: () => record(status.CANCELLED) }),
      sendStatus: (s, next) => {
        record(s.code ?? status.UNKNOWN);
        next(s);
      },
    });
  };
}

/**
 * For a client's `interceptors` option (`new Client(address, credentials, { interceptors: [...] })`): every
 * call made is recorded with the status it ended with, the ones the client raises itself included
 * (DEADLINE_EXCEEDED, UNAVAILABLE when no connection could be made).
 */
export function grpcClientInterceptor(metrics: Metrics): Interceptor {
  return (options, nextCall) => {
    const started = performance.now();
    const method = options.method_definition.path;
    return new InterceptingCall(nextCall(options), {
      start: (metadata, _listener, next) =>
        next(metadata, {
          onReceiveStatus: (s, nextStatus) => {
            observeGrpcCall(metrics, 'client', method, s.code, (performance.now() - started) / 1000);
            nextStatus(s);
          },
        }),
    });
  };
}
