import { afterEach, describe, expect, it } from 'vitest';
import { openTestGateway, type TestGateway } from './testing/harness.ts';

describe('gateway rate limiting', () => {
  let gw: TestGateway;
  afterEach(() => gw.close());

  it('429 rate_limited with Retry-After once a key has spent its burst; other keys are unaffected', async () => {
    gw = await openTestGateway();
    const slow = await gw.newKey({ requestsPerSecond: 0.5, burst: 2 });
    const other = await gw.newKey();
    const get = (key: string) => gw.app.inject({ url: '/status/req-x', headers: { 'x-api-key': key } });
    expect((await get(slow.apiKey)).statusCode).toBe(404);
    expect((await get(slow.apiKey)).statusCode).toBe(404);
    const limited = await get(slow.apiKey);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('2');
    expect(limited.json()).toEqual({ error: 'rate_limited', message: expect.stringContaining('API key'), retry_after_seconds: 2 });
    expect((await get(other.apiKey)).statusCode).toBe(404);
  });

  it('public endpoints are limited per client address when configured', async () => {
    gw = await openTestGateway({ publicRateLimit: { requestsPerSecond: 1, burst: 1 } });
    expect((await gw.app.inject({ url: '/health' })).statusCode).toBe(200);
    const limited = await gw.app.inject({ url: '/feed/recent' });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    const fromElsewhere = await gw.app.inject({ url: '/health', remoteAddress: '10.0.0.2' });
    expect(fromElsewhere.statusCode).toBe(200);
  });
});
