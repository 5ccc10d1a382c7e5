/**
 * Slow and hostile clients (issue: hardening, faults 5): a few hundred slow bodies from one address do not
 * stop the gateway answering /health and executes to others; slow bodies end at the request timeout; an
 * early error to an unread body closes the connection, and the client reads that answer (never a reset).
 */
import { connect, type Socket } from 'node:net';
import { encodeFunctionData, parseAbi } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.ts';

const ATTACKER = '127.0.0.2'; // another loopback address: the bound is per client address
const INCREMENT = encodeFunctionData({ abi: parseAbi(['function increment()']), functionName: 'increment' });

let svc: TestService;
let port = 0;
beforeAll(async () => {
  svc = await startTestService({ connections: { requestTimeoutMs: 3_000, headersTimeoutMs: 2_000, maxConnectionsPerAddress: 64, lingerMs: 500 } });
  port = Number(new URL(svc.url).port);
});
afterAll(async () => {
  await svc?.stop();
});

/** Opens a connection and sends the head of a POST with a body it never finishes. */
function slowBody(headers: Record<string, string> = {}, opts: { from?: string; length?: number; sent?: string } = {}): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress: opts.from ?? ATTACKER }, () => {
      const head = Object.entries({ 'content-type': 'application/json', 'content-length': String(opts.length ?? 1_000), ...headers })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.write(`POST /execute HTTP/1.1\r\nhost: 127.0.0.1\r\n${head}\r\n${opts.sent ?? '{"agent_id":'}`);
      resolve(socket);
    });
    socket.on('error', () => undefined); // refused or reset: seen by the caller through 'close'
    socket.once('close', () => resolve(socket)); // closed before it even connected (past the bound)
  });
}

/** Everything the server sends until it closes (or until `ms`). */
function readAll(socket: Socket, ms = 10_000): Promise<{ text: string; closed: boolean; error?: string }> {
  return new Promise((resolve) => {
    let text = '';
    let error: string | undefined;
    socket.on('data', (d) => (text += d.toString()));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code));
    const timer = setTimeout(() => resolve({ text, closed: false, ...(error && { error }) }), ms);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true, ...(error && { error }) });
    });
  });
}

const closed = (s: Socket) => new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())));

describe('slow and hostile clients', () => {
  it('300 slow bodies from one address: the others still get /health and executes; the slow ones end', async () => {
    const { api } = await svc.newKey('sponsored');
    const attack = await Promise.all(Array.from({ length: 300 }, () => slowBody({ 'x-api-key': 'aw_nobody' })));

    for (const s of attack) s.resume(); // read what the server sends (a 401), so its close is seen
    const health = await fetch(`${svc.url}/health`);
    expect(health.status).toBe(200);
    const counter = svc.devnet.chain('base').testContracts.counter;
    const executed = await api.post('/execute', { agent_id: 'under-attack', chain: 'base', target_contract: counter, calldata: INCREMENT });
    expect(executed.status).toBe(200);

    // Past the bound, connections were closed as they came; the rest end at the request timeout (or at the
    // 401, which closes the connection). Nothing is held open.
    await Promise.all(attack.map(closed));
    expect(attack.every((s) => s.destroyed)).toBe(true);
    expect((await fetch(`${svc.url}/health`)).status).toBe(200);
  });

  it('an authenticated slow body is cut at the request timeout', async () => {
    const { apiKey } = await svc.newKey('sponsored');
    const socket = await slowBody({ 'x-api-key': apiKey }, { from: '127.0.0.3' });
    const answer = await readAll(socket, 20_000);
    expect(answer.closed).toBe(true);
    expect(answer.text).toMatch(/^HTTP\/1\.1 408/); // Node's answer to a request that took too long
  });

  it('a 401 to an unread body is answered, the connection closed; the client reads it, not a reset', async () => {
    const socket = await slowBody({}, { from: '127.0.0.4', length: 100_000 });
    const answer = await readAll(socket);
    expect(answer.text).toMatch(/^HTTP\/1\.1 401/);
    expect(answer.text.toLowerCase()).toContain('connection: close');
    expect(answer.closed).toBe(true);
  });

  it('a body declared over the limit gets its 413 even while the client is still writing', async () => {
    const { apiKey } = await svc.newKey('sponsored');
    const socket = await slowBody({ 'x-api-key': apiKey }, { from: '127.0.0.5', length: 5 * 1024 * 1024 });
    const reading = readAll(socket);
    // Keep writing after the answer: the server reads and drops it (lingering close) instead of resetting.
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    for (let i = 0; i < 16 && !socket.destroyed; i++) {
      socket.write(chunk);
      await new Promise((r) => setTimeout(r, 10));
    }
    const answer = await reading;
    expect(answer.text).toMatch(/^HTTP\/1\.1 413/);
    expect(answer.text).toContain('payload_too_large');
    expect(answer.error).toBeUndefined();
  });

  it('headers over 32 KiB in total: 431 headers_too_large in the error shape', async () => {
    const res = await fetch(`${svc.url}/health`, { headers: { 'x-padding': 'a'.repeat(40 * 1024) } });
    expect(res.status).toBe(431);
    expect(await res.json()).toMatchObject({ error: 'headers_too_large' });
  });
});
