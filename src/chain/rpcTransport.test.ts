/**
 * The RPC transport's failover and 429 handling against real local HTTP servers that answer, refuse with 429,
 * fail with 5xx, hang, or are not there at all; then against a devnet chain through flaky proxies.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpRequestError, keccak256, parseEther, type BaseError, RpcRequestError, TimeoutError, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { batchingHttp, retryAfterMs, type FailoverOptions } from './rpcTransport.ts';
import { createChainClient } from './client.ts';
import { chainUnderTest } from '../../test/support/chainUnderTest.ts';
import { until } from '../../test/support/until.ts';

type Body = { id: number; method: string; params: unknown[] };
type Handler = (calls: Body[], res: ServerResponse, req: IncomingMessage) => void;

/** A JSON-RPC server on a loopback port: records what it got (and when), answers with `handler`. */
interface FakeNode {
  url: string;
  /** Every POST, as the calls it carried and the time it arrived. */
  seen: { calls: Body[]; at: number }[];
  handler: Handler;
  close(): Promise<void>;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
});

const answer = (res: ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};
/** Answers every call with its method's name: the test sees which node answered by the `node` tag. */
const echo =
  (node: string) =>
  (calls: Body[], res: ServerResponse): void => {
    const answers = calls.map((c) => ({ jsonrpc: '2.0', id: c.id, result: `${node}:${c.method}` }));
    answer(res, answers.length === 1 ? answers[0] : answers);
  };

async function fakeNode(handler: Handler, port = 0): Promise<FakeNode> {
  const node: FakeNode = { url: '', seen: [], handler, close: async () => {} };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body | Body[];
      const calls = Array.isArray(parsed) ? parsed : [parsed];
      node.seen.push({ calls, at: Date.now() });
      node.handler(calls, res, req);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  node.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  node.close = () => new Promise((r) => (server.closeAllConnections(), server.close(() => r())));
  return node;
}

/** The transport's request function, with viem's own retries off: what is seen is the transport's doing. */
function transport(urls: string[], failover: FailoverOptions = {}, timeoutMs = 2_000) {
  return batchingHttp(urls, { timeoutMs, retryCount: 0, failover })({ retryCount: 0 }).request as (a: { method: string; params?: unknown[] }) => Promise<unknown>;
}

describe('failover between endpoints', () => {
  it('answers from the primary while it answers: the fallback gets nothing', async () => {
    const [a, b] = [await fakeNode(echo('a')), await fakeNode(echo('b'))];
    const request = transport([a.url, b.url]);
    await expect(request({ method: 'eth_chainId' })).resolves.toBe('a:eth_chainId');
    expect(b.seen).toHaveLength(0);
  });

  it('goes to the fallback when the primary refuses connections, and back to the primary after the cooldown', async () => {
    const a = await fakeNode(echo('a'));
    const b = await fakeNode(echo('b'));
    const port = Number(new URL(a.url).port);
    await a.close();
    const request = transport([a.url, b.url], { cooldownMs: 200 });
    await expect(request({ method: 'eth_blockNumber' })).resolves.toBe('b:eth_blockNumber');
    // Within the cooldown the dead primary is not tried first again: the next call goes straight to b.
    await expect(request({ method: 'eth_gasPrice' })).resolves.toBe('b:eth_gasPrice');
    const back = await fakeNode(echo('a'), port);
    const answered = await until('the primary to be used again', async () => {
      const r = await request({ method: 'eth_chainId' });
      return r === 'a:eth_chainId' ? r : undefined;
    }, 10_000, 50);
    expect(answered).toBe('a:eth_chainId');
    expect(back.seen.length).toBeGreaterThan(0);
  });

  it('tells who failed and why, by origin only (a provider key in the path or query stays out)', async () => {
    const a = await fakeNode((_c, res) => answer(res, { error: 'bad gateway' }, 502));
    const limited = await fakeNode((_c, res) => answer(res, { error: 'slow down' }, 429));
    const b = await fakeNode(echo('b'));
    const told: [string, string][] = [];
    const onEndpointFailed = (endpoint: string, reason: string) => told.push([endpoint, reason]);
    await expect(transport([`${a.url}/v2/SECRET-KEY`, `${limited.url}/?key=SECRET`, b.url], { onEndpointFailed, backoffBaseMs: 10 })({ method: 'eth_chainId' })).resolves.toBe('b:eth_chainId');
    expect(told).toEqual([
      [a.url, 'unreachable'],
      [limited.url, 'rateLimited'],
    ]);
    expect(JSON.stringify(told)).not.toContain('SECRET');
  });

  it('goes to the fallback when the primary hangs past the timeout', async () => {
    const a = await fakeNode(() => {}); // takes the request, never answers
    const b = await fakeNode(echo('b'));
    const request = transport([a.url, b.url], {}, 300);
    await expect(request({ method: 'eth_blockNumber' })).resolves.toBe('b:eth_blockNumber');
    expect(a.seen).toHaveLength(1);
  });

  it('goes to the fallback on a 5xx, a 4xx that blames the endpoint (401, 403, 404), or an answer that is not JSON', async () => {
    for (const fail of [
      (res: ServerResponse) => answer(res, { error: 'bad gateway' }, 502),
      (res: ServerResponse) => answer(res, { error: 'invalid API key' }, 401),
      (res: ServerResponse) => answer(res, { error: 'quota' }, 403),
      (res: ServerResponse) => answer(res, { error: 'no such path' }, 404),
      (res: ServerResponse) => (res.writeHead(200, { 'content-type': 'text/html' }), res.end('<html>maintenance</html>')),
    ]) {
      const a = await fakeNode((_c, res) => fail(res));
      const b = await fakeNode(echo('b'));
      await expect(transport([a.url, b.url])({ method: 'eth_blockNumber' })).resolves.toBe('b:eth_blockNumber');
      expect(a.seen).toHaveLength(1);
    }
  });

  it('fails over a whole batch: calls made together go to the fallback together', async () => {
    const a = await fakeNode((_c, res) => answer(res, {}, 503));
    const b = await fakeNode(echo('b'));
    const request = transport([a.url, b.url]);
    const results = await Promise.all(['eth_chainId', 'eth_blockNumber', 'eth_gasPrice'].map((method) => request({ method })));
    expect(results).toEqual(['b:eth_chainId', 'b:eth_blockNumber', 'b:eth_gasPrice']);
    expect(b.seen.map((s) => s.calls.length)).toEqual([3]);
  });

  it('takes a JSON-RPC error as an answer (a revert, "nonce too low"): no failover', async () => {
    const a = await fakeNode((calls, res) =>
      answer(res, { jsonrpc: '2.0', id: calls[0]!.id, error: { code: 3, message: 'execution reverted', data: '0x08c379a0' } }),
    );
    const b = await fakeNode(echo('b'));
    const e = await transport([a.url, b.url])({ method: 'eth_call' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RpcRequestError);
    expect((e as RpcRequestError).code).toBe(3);
    expect(b.seen).toHaveLength(0);
  });

  it('takes a 400 or 413 as the request’s fault: no failover', async () => {
    for (const status of [400, 413]) {
      const a = await fakeNode((_c, res) => answer(res, { error: 'bad request' }, status));
      const b = await fakeNode(echo('b'));
      const e = await transport([a.url, b.url])({ method: 'eth_call' }).catch((x: unknown) => x);
      expect((e as HttpRequestError).status).toBe(status);
      expect(b.seen).toHaveLength(0);
    }
  });

  it('fails with the last endpoint’s error when every endpoint fails, each tried once', async () => {
    const a = await fakeNode((_c, res) => answer(res, {}, 502));
    const b = await fakeNode(() => {});
    const e = await transport([a.url, b.url], {}, 200)({ method: 'eth_blockNumber' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TimeoutError);
    expect([a.seen.length, b.seen.length]).toEqual([1, 1]);
  });
});

describe('429: backoff, not a failed request', () => {
  it('waits for Retry-After (seconds) and asks the same endpoint again', async () => {
    let n = 0;
    const a = await fakeNode((calls, res) => (n++ === 0 ? answer(res, {}, 429, { 'retry-after': '1' }) : echo('a')(calls, res)));
    await expect(transport([a.url])({ method: 'eth_blockNumber' })).resolves.toBe('a:eth_blockNumber');
    expect(a.seen).toHaveLength(2);
    expect(a.seen[1]!.at - a.seen[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('backs off exponentially without Retry-After, capped', async () => {
    let n = 0;
    const a = await fakeNode((calls, res) => (n++ < 4 ? answer(res, {}, 429) : echo('a')(calls, res)));
    const request = transport([a.url], { backoffBaseMs: 60, backoffMaxMs: 150, maxRateLimitWaitMs: 5_000 });
    await expect(request({ method: 'eth_blockNumber' })).resolves.toBe('a:eth_blockNumber');
    const gaps = a.seen.slice(1).map((s, i) => s.at - a.seen[i]!.at);
    expect(gaps).toHaveLength(4);
    // 60, 120, then 150 (the cap) twice; a timer never fires early, so these are lower bounds.
    [60, 120, 150, 150].forEach((least, i) => expect(gaps[i], `gap ${i}`).toBeGreaterThanOrEqual(least - 5));
  });

  it('takes a 200 whose answers are all rate-limit errors (code 429) as a 429', async () => {
    let n = 0;
    const a = await fakeNode((calls, res) =>
      n++ === 0 ? answer(res, { jsonrpc: '2.0', id: calls[0]!.id, error: { code: 429, message: 'Your app has exceeded its compute units' } }) : echo('a')(calls, res),
    );
    await expect(transport([a.url], { backoffBaseMs: 20 })({ method: 'eth_blockNumber' })).resolves.toBe('a:eth_blockNumber');
    expect(a.seen).toHaveLength(2);
  });

  it('fails with the 429 once the bounded wait is spent, and heeds Retry-After for the next batch too', async () => {
    const a = await fakeNode((_c, res) => answer(res, {}, 429, { 'retry-after': '2' }));
    const request = transport([a.url], { maxRateLimitWaitMs: 500 });
    const e = await request({ method: 'eth_blockNumber' }).catch((x: unknown) => x);
    expect((e as HttpRequestError).status).toBe(429);
    // Retry-After 2 s is past the 500 ms budget: asked once, not waited for.
    expect(a.seen).toHaveLength(1);
    // Within those 2 s the endpoint is not asked again: the next batch fails at once with the same 429.
    expect(((await request({ method: 'eth_chainId' }).catch((x: unknown) => x)) as HttpRequestError).status).toBe(429);
    expect(a.seen).toHaveLength(1);
  });

  it('asks a fallback at once while the primary is rate-limited, and the primary again after its backoff', async () => {
    let n = 0;
    const a = await fakeNode((calls, res) => (n++ === 0 ? answer(res, {}, 429, { 'retry-after': '1' }) : echo('a')(calls, res)));
    const b = await fakeNode(echo('b'));
    const request = transport([a.url, b.url]);
    await expect(request({ method: 'eth_blockNumber' })).resolves.toBe('b:eth_blockNumber');
    const back = await until('the primary after its Retry-After', async () => {
      const r = await request({ method: 'eth_chainId' });
      return r === 'a:eth_chainId' ? r : undefined;
    }, 10_000, 100);
    expect(back).toBe('a:eth_chainId');
    expect(a.seen.at(-1)!.at - a.seen[0]!.at).toBeGreaterThanOrEqual(950);
  });
});

describe('retryAfterMs', () => {
  it('reads delay-seconds and HTTP-dates; anything else is no figure', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3_000);
    expect(retryAfterMs(['0'], now)).toBe(0);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:02 GMT', now)).toBe(2_000);
    expect(retryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });
});

/** What a flaky proxy does with one request: pass it on, or one of the faults a hosted RPC shows. */
type Fault = 'forward' | '429' | '502' | 'reset' | 'hang' | 'lose-answer';

/** An HTTP proxy in front of a devnet node that goes through `schedule` in a cycle, one step per request. */
async function flakyProxy(upstream: string, schedule: Fault[]) {
  let step = 0;
  const counts: Record<Fault, number> = { forward: 0, '429': 0, '502': 0, reset: 0, hang: 0, 'lose-answer': 0 };
  const node = await fakeNode(() => {});
  node.handler = (calls, res, req) => {
    const fault = schedule[step++ % schedule.length]!;
    counts[fault] += 1;
    if (fault === '429') return answer(res, { error: 'rate limited' }, 429);
    if (fault === '502') return answer(res, { error: 'bad gateway' }, 502);
    if (fault === 'reset') return req.socket.destroy();
    if (fault === 'hang') return;
    const body = JSON.stringify(calls.length === 1 ? calls[0] : calls);
    const up = httpRequest(upstream, { method: 'POST', headers: { 'content-type': 'application/json' } }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => {
        // The node did it; its answer never reaches the caller (a connection cut on the way back).
        if (fault === 'lose-answer') return req.socket.destroy();
        res.writeHead(r.statusCode ?? 502, { 'content-type': 'application/json' });
        res.end(Buffer.concat(chunks));
      });
    });
    up.end(body);
  };
  return { url: node.url, counts };
}

describe('a devnet chain through flaky proxies', () => {
  const { config, funded } = chainUnderTest('ethereum');

  it('reads and sends through two endpoints that fail, rate-limit and hang in turn: every call answered, every transfer once', async () => {
    const a = await flakyProxy(config.rpcUrl, ['forward', '429', 'forward', '502', 'forward', 'reset', 'forward', 'hang']);
    // The fallback only rate-limits (waited for): when the primary fails, the call must still be answered.
    const b = await flakyProxy(config.rpcUrl, ['forward', 'forward', '429', 'forward']);
    const client = createChainClient(
      { ...config, rpcUrl: a.url, fallbackRpcUrls: [b.url] },
      { timeoutMs: 400, failover: { cooldownMs: 150, backoffBaseMs: 20, backoffMaxMs: 100 } },
    );
    const sender = privateKeyToAccount(generatePrivateKey());
    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    await funded.sendTransactionSync({ to: sender.address, value: parseEther('1') });

    const transfers = 8;
    for (let i = 0; i < transfers; i++) {
      const [block, balance, nonce, fees] = await Promise.all([
        client.getBlockNumber(),
        client.getBalance({ address: sender.address }),
        client.getTransactionCount({ address: sender.address, blockTag: 'pending' }),
        client.estimateFeesPerGas(),
      ]);
      expect(block).toBeGreaterThan(0n);
      expect(balance).toBeGreaterThan(0n);
      expect(nonce).toBe(i);
      const signed = await sender.signTransaction({ chainId: config.chainId, type: 'eip1559', nonce, to: recipient, value: 1_000n, gas: 21_000n, ...fees });
      const hash = await client.sendRawTransaction({ serializedTransaction: signed });
      const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
      expect(receipt.status).toBe('success');
    }
    expect(await client.getBalance({ address: recipient })).toBe(BigInt(transfers) * 1_000n);
    // The faults happened, on both endpoints: the calls above went through them.
    const faults = (c: Record<Fault, number>) => c['429'] + c['502'] + c.reset + c.hang;
    expect(faults(a.counts)).toBeGreaterThanOrEqual(4);
    expect(b.counts['429']).toBeGreaterThanOrEqual(2);
    console.log(`flaky proxies: primary ${JSON.stringify(a.counts)}, fallback ${JSON.stringify(b.counts)}`);
  }, 60_000);

  it('a send whose answer was lost, sent again on the fallback: the node answers with an error, and the transaction is there', async () => {
    // Why the senders (bundler executors, sending accounts) ask for the transaction after a failed send:
    // the first endpoint's node took it; the fallback's node has it already, mined or pooled.
    const a = await flakyProxy(config.rpcUrl, ['lose-answer']);
    const client = createChainClient({ ...config, rpcUrl: a.url, fallbackRpcUrls: [config.rpcUrl] }, { timeoutMs: 2_000 });
    const direct = createChainClient(config);
    const sender = privateKeyToAccount(generatePrivateKey());
    await funded.sendTransactionSync({ to: sender.address, value: parseEther('0.1') });
    const fees = await direct.estimateFeesPerGas();
    const signed = await sender.signTransaction({ chainId: config.chainId, type: 'eip1559', nonce: 0, to: sender.address, value: 0n, gas: 21_000n, ...fees });
    const error = await client.sendRawTransaction({ serializedTransaction: signed }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(a.counts['lose-answer']).toBe(1);
    expect(error?.message).toMatch(/nonce too low|already known|known transaction/i);
    const tx = await direct.getTransaction({ hash: keccak256(signed as Hex) });
    expect(tx.from.toLowerCase()).toBe(sender.address.toLowerCase());
    console.log(`the fallback's answer to the same transaction: ${(error as BaseError).details}`);
  }, 30_000);
});
