import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInMemoryRateLimiter } from '../ratelimit/index.ts';
import { buildFaucetApp } from './app.ts';
import { createFaucet } from './faucet.ts';
import { createDripLimits } from './limits.ts';
import { createTokenSender } from './sender.ts';
import { aUSDBalance, closeDevnetFaucetWorkers, devnetFaucetSettings, devnetFaucetWorkers, freshAddress, GENEROUS_LIMITS } from '../../test/support/faucetUnderTest.ts';
import { testDevnet } from '../../test/support/env.ts';
import type { FaucetSettings } from './config.ts';

/** A faucet app on the shared devnet, answered in process (inject). */
async function faucetApp(settings: FaucetSettings, trustProxy?: boolean | string): Promise<FastifyInstance> {
  const sender = await createTokenSender({ ...settings, workers: await devnetFaucetWorkers() });
  const faucet = createFaucet({ settings, sender, limits: createDripLimits(createInMemoryRateLimiter(), settings.limits) });
  const app = await buildFaucetApp({ faucet, trustProxy });
  app.addHook('onClose', () => sender.close());
  return app;
}

afterAll(() => closeDevnetFaucetWorkers());

const EIP55 = '0x52908400098527886E0F7030069857D2E4169EE7';
/** The same address with one letter's case flipped: a wrong checksum. */
const BAD_CHECKSUM = '0x52908400098527886e0F7030069857D2E4169EE7';

describe('faucet API: validation', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await faucetApp(devnetFaucetSettings());
  });
  afterAll(() => app.close());
  const drip = (payload: unknown) => app.inject({ method: 'POST', url: '/api/drip', payload: payload as object });

  it.each([
    ['all lowercase', EIP55.toLowerCase()],
    ['all uppercase', `0x${EIP55.slice(2).toUpperCase()}`],
    ['a valid EIP-55 checksum', EIP55],
  ])('accepts an address in %s and answers it checksummed', async (_, address) => {
    const res = await drip({ address, chain: 'base' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ chain: 'base', address: EIP55, token: 'aUSD', amount: '100', amount_raw: '100000000' });
  });

  it.each([
    ['a wrong checksum', BAD_CHECKSUM, 'invalid_address'],
    ['19 bytes', EIP55.slice(0, -2), 'invalid_address'],
    ['no 0x', EIP55.slice(2), 'invalid_address'],
    ['not hex', `0x${'g'.repeat(40)}`, 'invalid_address'],
    ['a number', 12345, 'invalid_address'],
    ['null', null, 'invalid_address'],
    ['the zero address', `0x${'0'.repeat(40)}`, 'invalid_address'],
    ['nothing', undefined, 'missing_field'],
  ])('refuses an address that is %s: 400 %s', async (_, address, code) => {
    const res = await drip({ address, chain: 'base' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: code, field: 'address' });
    expect(res.json().message).toMatch(/^address /);
  });

  it('takes chain names and aliases in any case, ethereum by default; refuses other chains', async () => {
    const address = freshAddress();
    expect((await drip({ address, chain: 'ARB' })).json()).toMatchObject({ chain: 'arbitrum' });
    expect((await drip({ address, chain: 'Eth' })).json()).toMatchObject({ chain: 'ethereum' });
    expect((await drip({ address })).json()).toMatchObject({ chain: 'ethereum' });
    for (const chain of ['polygon', ' base', 42]) {
      const res = await drip({ address, chain });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'unsupported_chain', field: 'chain' });
    }
  });

  it('answers a body that is not JSON, or not an object, with the service’s codes', async () => {
    const bad = await app.inject({ method: 'POST', url: '/api/drip', headers: { 'content-type': 'application/json' }, payload: '{"address":' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: 'invalid_json' });
    const text = await app.inject({ method: 'POST', url: '/api/drip', headers: { 'content-type': 'text/plain' }, payload: EIP55 });
    expect(text.statusCode).toBe(415);
    expect(text.json()).toMatchObject({ error: 'unsupported_media_type' });
    const form = await app.inject({ method: 'POST', url: '/api/drip', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `address=${EIP55}` });
    expect(form.statusCode).toBe(415); // the form post is the page's, the JSON API takes JSON
    const missing = await app.inject({ method: 'GET', url: '/api/nothing' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: 'not_found' });
  });

  it('GET /api/info and /openapi.json describe the chains, the amount, the limits and the contract', async () => {
    const settings = devnetFaucetSettings();
    const info = (await app.inject({ url: '/api/info' })).json();
    expect(info).toMatchObject({ token: 'aUSD', amount: '100', default_chain: 'ethereum', limits: { per_address: { burst: 1_000, every_seconds: 1 } } });
    expect(info.chains).toEqual(
      settings.chains.map((c) => expect.objectContaining({ chain: c.name, chain_id: c.chainId, token_address: c.token.address, decimals: 6, amount_raw: '100000000' })),
    );
    const doc = (await app.inject({ url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths).sort()).toEqual(['/api/drip', '/api/info']);
    const body = doc.paths['/api/drip'].post.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['address']);
    expect(body.properties.address.pattern).toBe('^0x[0-9a-fA-F]{40}$');
    expect(Object.keys(doc.paths['/api/drip'].post.responses).sort()).toEqual(['200', '400', '413', '415', '429', '500', '503']);
  });
});

describe('faucet API: a chain the faucet does not serve', () => {
  it('is 400 unsupported_chain naming the chains it serves, and sends nothing', async () => {
    const all = devnetFaucetSettings();
    const app = await faucetApp({ ...all, chains: all.chains.filter((c) => c.name === 'base') });
    try {
      const address = freshAddress();
      const res = await app.inject({ method: 'POST', url: '/api/drip', payload: { address, chain: 'arbitrum' } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'unsupported_chain', field: 'chain', message: 'chain must be one of the chains this faucet serves: base' });
      expect(await aUSDBalance('arbitrum', address)).toBe(0n);
      // The page offers only what it serves, and selects it.
      const page = (await app.inject({ url: '/' })).body;
      expect(page).toContain('<option value="base" selected>');
      expect(page).not.toContain('value="arbitrum"');
    } finally {
      await app.close();
    }
  });
});

describe("faucet API: the service's own accounts", () => {
  it('refuses a drip to any chain’s treasury, the executors, the settler, the paymaster signer or the faucet: 400 address_not_allowed, nothing sent', async () => {
    const { manifest } = testDevnet();
    const { executors, paymasterSigner, settler, faucet } = manifest.accounts;
    const own = [...manifest.chains.map((c) => c.treasury), executors[0]!.address, executors.at(-1)!.address, paymasterSigner.address, settler!.address, faucet!.address];
    // One drip per client: a refusal must not use it up.
    const app = await faucetApp(devnetFaucetSettings({ limits: { perAddress: GENEROUS_LIMITS.perAddress, perClient: { burst: 1, everySeconds: 600 } } }));
    try {
      const drip = (address: string, chain: string) => app.inject({ method: 'POST', url: '/api/drip', payload: { address, chain } });
      const treasury = manifest.chains.find((c) => c.name === 'base')!.treasury;
      const treasuryBefore = await aUSDBalance('base', treasury);
      for (const address of own) {
        for (const form of [address, address.toLowerCase()]) {
          const res = await drip(form, 'base');
          expect(res.statusCode, form).toBe(400);
          expect(res.json()).toMatchObject({ error: 'address_not_allowed', field: 'address' });
          expect(res.json().message).toMatch(/^address is one of the service's own accounts/);
        }
      }
      // Every chain's treasury, on any chain.
      const ethereumTreasury = manifest.chains.find((c) => c.name === 'ethereum')!.treasury;
      expect((await drip(ethereumTreasury, 'arbitrum')).json()).toMatchObject({ error: 'address_not_allowed' });
      expect(await aUSDBalance('base', treasury)).toBe(treasuryBefore);
      expect((await drip(freshAddress(), 'base')).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('refuses the addresses a deployment lists, and the faucet’s own address though unlisted', async () => {
    const listed = freshAddress();
    const settings = { ...devnetFaucetSettings(), serviceAccounts: [listed] };
    const app = await faucetApp(settings);
    try {
      const faucetAddress = (await app.inject({ url: '/api/info' })).json().faucet_address as string;
      for (const address of [listed, faucetAddress]) {
        const res = await app.inject({ method: 'POST', url: '/api/drip', payload: { address, chain: 'ethereum' } });
        expect(res.json()).toMatchObject({ error: 'address_not_allowed', field: 'address' });
      }
      expect(await aUSDBalance('ethereum', listed)).toBe(0n);
    } finally {
      await app.close();
    }
  });
});

describe('faucet page', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await faucetApp(devnetFaucetSettings({ limits: { perAddress: { burst: 1, everySeconds: 7_200 }, perClient: { burst: 1_000, everySeconds: 1 } } }));
  });
  afterAll(() => app.close());
  const post = (form: Record<string, string>) =>
    app.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(form).toString() });

  it('GET / is a form with every chain, prefilled from the query, escaped, under a CSP that allows no script', async () => {
    const res = await app.inject({ url: `/?address=${encodeURIComponent('"><script>alert(1)</script>')}&chain=ARB` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; form-action 'self'/);
    expect(res.body).not.toContain('<script');
    expect(res.body).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(res.body).toContain('<option value="arbitrum" selected>');
    expect(res.body).toMatch(/<form method="post" action="\/">/);
    expect(res.body).toMatch(/<label for="address">[^<]+<\/label>\s*<input id="address" name="address"/);
    expect(res.body).toContain('Each address: 1 drip per chain, then one more every 2 hours.');
  });

  it('a form post sends, and the page shows the transaction and the new balance (the address may come with spaces)', async () => {
    const address = freshAddress();
    const res = await post({ address: `  ${address.toLowerCase()}\n`, chain: 'base' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('role="status"');
    expect(res.body).toContain(`Sent 100 aUSD on base`);
    expect(res.body).toContain(`<code id="result-address">${address}</code>`);
    const tx = /<dd id="result-tx"><code>(0x[0-9a-f]{64})<\/code>/.exec(res.body)?.[1];
    expect(tx).toBeDefined();
    expect(res.body).toContain('<dd id="result-balance" data-raw="100000000">100 aUSD</dd>');
    expect(await aUSDBalance('base', address)).toBe(100_000_000n);
  });

  it('a refused post shows the error on the page, with the API’s status, and echoes the input escaped', async () => {
    const bad = await post({ address: '0x12<b>', chain: 'base' });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(bad.body).toContain('role="alert"');
    expect(bad.body).toContain('<code id="result-code">invalid_address</code>');
    expect(bad.body).toContain('value="0x12&lt;b&gt;"');
    expect(bad.body).not.toContain('<b>');
    expect(bad.body).toContain('<option value="base" selected>');

    const address = freshAddress();
    expect((await post({ address, chain: 'ethereum' })).statusCode).toBe(200);
    const again = await post({ address, chain: 'ethereum' });
    expect(again.statusCode).toBe(429);
    expect(again.headers['retry-after']).toBe('7200');
    expect(again.body).toContain('Too many drips for now');
    expect(again.body).toContain('this address has had its drips of aUSD on ethereum for now; retry after 7200 s. Try again in 2 hours.');
  });
});

describe('faucet behind a proxy', () => {
  const oneDripPerClient = devnetFaucetSettings({ limits: { perAddress: GENEROUS_LIMITS.perAddress, perClient: { burst: 1, everySeconds: 600 } } });
  const dripVia = (app: FastifyInstance, proxy: string, client: string) =>
    app.inject({ method: 'POST', url: '/api/drip', remoteAddress: proxy, headers: { 'x-forwarded-for': client }, payload: { address: freshAddress(), chain: 'base' } });

  it('with trustProxy naming the proxy, each client behind it has its own limit', async () => {
    const app = await faucetApp(oneDripPerClient, '10.0.0.0/8');
    try {
      expect((await dripVia(app, '10.1.2.3', '198.51.100.1')).statusCode).toBe(200);
      expect((await dripVia(app, '10.1.2.3', '198.51.100.2')).statusCode).toBe(200);
      expect((await dripVia(app, '10.1.2.3', '198.51.100.1')).json()).toMatchObject({ error: 'rate_limited', limit: 'client' });
      // A client outside the trusted range cannot pick its address with the header.
      expect((await dripVia(app, '192.0.2.9', '198.51.100.3')).statusCode).toBe(200);
      expect((await dripVia(app, '192.0.2.9', '198.51.100.4')).json()).toMatchObject({ error: 'rate_limited', limit: 'client' });
    } finally {
      await app.close();
    }
  });

  it('without it, X-Forwarded-For is ignored: a client cannot escape its limit by forging it', async () => {
    const app = await faucetApp(oneDripPerClient);
    try {
      expect((await dripVia(app, '192.0.2.10', '198.51.100.5')).statusCode).toBe(200);
      expect((await dripVia(app, '192.0.2.10', '198.51.100.6')).json()).toMatchObject({ error: 'rate_limited', limit: 'client' });
    } finally {
      await app.close();
    }
  });
});

describe('faucet API: slow and oversized clients (the gateway’s connection limits)', () => {
  it('headers over 32 KiB get 431 in the error shape; a body declared over the limit gets 413 and the connection closes', async () => {
    const app = await faucetApp(devnetFaucetSettings());
    try {
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      const huge = await fetch(`${url}/api/info`, { headers: { 'x-padding': 'a'.repeat(40 * 1024) } });
      expect(huge.status).toBe(431);
      expect(await huge.json()).toMatchObject({ error: 'headers_too_large' });
      const { connect } = await import('node:net');
      const answer = await new Promise<string>((resolve) => {
        const { port } = new URL(url);
        const socket = connect({ host: '127.0.0.1', port: Number(port) }, () =>
          socket.write('POST /api/drip HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{"address":'),
        );
        let text = '';
        socket.on('data', (d) => (text += d.toString()));
        socket.on('close', () => resolve(text));
      });
      expect(answer).toMatch(/^HTTP\/1\.1 413/);
      expect(answer.toLowerCase()).toContain('connection: close');
    } finally {
      await app.close();
    }
  });
});
