import * as grpc from '@grpc/grpc-js';
import { HealthImplementation, service as healthService } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcClientInterceptor, grpcCodeName, grpcServerInterceptor, observeGrpcCall } from './grpc.ts';
import { createMetrics } from './registry.ts';
import { parseExposition } from './testing/exposition.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A one-method service whose handler takes 300 ms: deadlines shorter than that expire. */
const slowService: grpc.ServiceDefinition = {
  wait: {
    path: '/test.v1.Slow/Wait',
    requestStream: false,
    responseStream: false,
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b,
  },
};

describe('gRPC metrics (a real grpc-js server and client)', () => {
  const serverMetrics = createMetrics({ defaultMetrics: false });
  const clientMetrics = createMetrics({ defaultMetrics: false });
  const server = new grpc.Server({ interceptors: [grpcServerInterceptor(serverMetrics)] });
  let address = '';
  const Health = grpc.makeGenericClientConstructor(healthService, 'Health');
  const Slow = grpc.makeGenericClientConstructor(slowService, 'Slow');
  let health: grpc.Client & Record<string, any>;
  let slow: grpc.Client & Record<string, any>;

  beforeAll(async () => {
    new HealthImplementation({ '': 'SERVING' }).addToServer(server);
    server.addService(slowService, {
      wait: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => setTimeout(() => callback(null, Buffer.alloc(0)), 300),
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    address = `127.0.0.1:${port}`;
    const options = { interceptors: [grpcClientInterceptor(clientMetrics)] };
    health = new Health(address, grpc.credentials.createInsecure(), options) as typeof health;
    slow = new Slow(address, grpc.credentials.createInsecure(), options) as typeof slow;
  });
  afterAll(async () => {
    health?.close();
    slow?.close();
    await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  });

  const unary = (client: Record<string, any>, method: string, request: unknown, deadlineMs = 5_000) =>
    new Promise<{ code: number }>((resolve) =>
      client[method](request, { deadline: Date.now() + deadlineMs }, (e: grpc.ServiceError | null) => resolve({ code: e?.code ?? grpc.status.OK })),
    );

  it('records each call once on both sides, by full method and status name', async () => {
    expect((await unary(health, 'check', { service: '' })).code).toBe(grpc.status.OK);
    expect((await unary(health, 'check', { service: '' })).code).toBe(grpc.status.OK);
    expect((await unary(health, 'check', { service: 'no.such.Service' })).code).toBe(grpc.status.NOT_FOUND);
    expect((await unary(slow, 'wait', Buffer.alloc(0), 50)).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    await sleep(400); // the slow handler finishes (its answer goes nowhere)

    const check = '/grpc.health.v1.Health/Check';
    const wait = '/test.v1.Slow/Wait';
    const c = parseExposition(await clientMetrics.scrape());
    expect(c.value('agentwallet_grpc_client_handled_total', { method: check, code: 'OK' })).toBe(2);
    expect(c.value('agentwallet_grpc_client_handled_total', { method: check, code: 'NOT_FOUND' })).toBe(1);
    expect(c.value('agentwallet_grpc_client_handled_total', { method: wait, code: 'DEADLINE_EXCEEDED' })).toBe(1);
    expect(c.value('agentwallet_grpc_client_handling_seconds_count', { method: check })).toBe(3);
    const waited = c.value('agentwallet_grpc_client_handling_seconds_sum', { method: wait })!;
    expect(waited).toBeGreaterThanOrEqual(0.04);
    expect(waited).toBeLessThan(0.3);

    const s = parseExposition(await serverMetrics.scrape());
    expect(s.value('agentwallet_grpc_server_handled_total', { method: check, code: 'OK' })).toBe(2);
    expect(s.value('agentwallet_grpc_server_handled_total', { method: check, code: 'NOT_FOUND' })).toBe(1);
    // The server learns of the expired deadline as a cancellation, before its handler answers: recorded once.
    expect(s.find('agentwallet_grpc_server_handled_total', { method: wait }).map((x) => [x.labels.code, x.value])).toEqual([['CANCELLED', 1]]);
    expect(s.value('agentwallet_grpc_server_handling_seconds_count', { method: wait })).toBe(1);
  });

  it('records a streaming call the client cancels', async () => {
    const call = health.watch({ service: '' });
    await new Promise<void>((resolve) => call.once('data', () => resolve()));
    call.on('error', () => undefined); // the cancellation surfaces as an error event
    call.cancel();
    await sleep(100);
    const watch = '/grpc.health.v1.Health/Watch';
    expect(parseExposition(await clientMetrics.scrape()).value('agentwallet_grpc_client_handled_total', { method: watch, code: 'CANCELLED' })).toBe(1);
    expect(parseExposition(await serverMetrics.scrape()).value('agentwallet_grpc_server_handled_total', { method: watch, code: 'CANCELLED' })).toBe(1);
  });

  it('records UNAVAILABLE on the client when nothing listens', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const nowhere = new Health('127.0.0.1:1', grpc.credentials.createInsecure(), { interceptors: [grpcClientInterceptor(metrics)] }) as typeof health;
    expect((await unary(nowhere, 'check', { service: '' }, 2_000)).code).toBe(grpc.status.UNAVAILABLE);
    nowhere.close();
    expect(parseExposition(await metrics.scrape()).value('agentwallet_grpc_client_handled_total', { method: '/grpc.health.v1.Health/Check', code: 'UNAVAILABLE' })).toBe(1);
  });

  it('bounds the method label and names codes for observeGrpcCall', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    for (let i = 0; i < 150; i++) observeGrpcCall(metrics, 'server', `/svc.v1.S/M${i}`, 0, 0.001);
    observeGrpcCall(metrics, 'server', 'not a method', 'UNAVAILABLE', 0.001);
    const e = parseExposition(await metrics.scrape());
    expect(e.series('agentwallet_grpc_server_handled_total')).toBe(102); // 100 methods, then `other` with two codes
    expect(e.value('agentwallet_grpc_server_handled_total', { method: 'other', code: 'OK' })).toBe(50);
    expect(e.value('agentwallet_grpc_server_handled_total', { method: 'other', code: 'UNAVAILABLE' })).toBe(1);
    expect([grpcCodeName(4), grpcCodeName('INTERNAL'), grpcCodeName(99), grpcCodeName('nope')]).toEqual(['DEADLINE_EXCEEDED', 'INTERNAL', 'other', 'other']);
  });
});
