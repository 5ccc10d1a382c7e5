/**
 * A tiny OTLP/HTTP traces receiver for tests and the bench (bench/traces.ts): POST /v1/traces with the JSON
 * encoding (what @opentelemetry/exporter-trace-otlp-http sends; gzip accepted), every span kept in memory with
 * its service.name and scope. No collector binary: the spans are the test's to read.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Undefined for a trace's root. */
  parentSpanId: string | undefined;
  name: string;
  /** The resource's service.name: the process (role) that made it. */
  service: string;
  /** The instrumentation scope: the layer (agent-wallet/gateway, …/controller, …/chain-worker). */
  scope: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; startTimeUnixNano: string | number; endTimeUnixNano: string | number; attributes?: KeyValue[] }[];
    }[];
  }[];
}

export interface OtlpReceiver {
  /** The OTLP base endpoint (what OTEL_EXPORTER_OTLP_ENDPOINT takes). */
  endpoint: string;
  /** The traces URL: `${endpoint}/v1/traces`. */
  url: string;
  readonly spans: ReceivedSpan[];
  /** Export requests received. */
  readonly requests: number;
  /** CPU this receiver spent decoding (ms): the bench takes it out of the service's figure when both share a process. */
  readonly cpuMs: number;
  /** Forgets the spans received so far. */
  clear(): void;
  close(): Promise<void>;
}

const valueOf = (v: AnyValue | undefined): string | number | boolean =>
  v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : undefined) ?? v?.doubleValue ?? v?.boolValue ?? '';
const attributesOf = (kvs: KeyValue[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
/** Unix nanoseconds (a decimal string in OTLP JSON) → epoch ms with sub-ms decimals. */
const nanosToMs = (n: string | number): number => Number(BigInt(n) / 1_000n) / 1_000;

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let requests = 0;
  let cpuMicros = 0;

  function take(body: Buffer, gzip: boolean): void {
    const before = process.cpuUsage();
    const req = JSON.parse((gzip ? gunzipSync(body) : body).toString('utf8')) as ExportRequest;
    for (const rs of req.resourceSpans ?? []) {
      const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId || undefined,
            name: s.name,
            service,
            scope: ss.scope?.name ?? '',
            startMs: nanosToMs(s.startTimeUnixNano),
            endMs: nanosToMs(s.endTimeUnixNano),
            attributes: attributesOf(s.attributes),
          });
        }
      }
    }
    const used = process.cpuUsage(before);
    cpuMicros += used.user + used.system;
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
      res.writeHead(415, { 'content-type': 'application/json' }).end('{"message":"JSON only"}');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        take(Buffer.concat(chunks), req.headers['content-encoding'] === 'gzip');
        requests++;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (e) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: String(e) }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    url: `${endpoint}/v1/traces`,
    spans,
    get requests() {
      return requests;
    },
    get cpuMs() {
      return cpuMicros / 1000;
    },
    clear: () => void spans.splice(0),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
