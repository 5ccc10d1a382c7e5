import { describe, expect, it } from 'vitest';
import { CLUSTER_LOOPBACK_SETTING, createCallbackGuard, EMBEDDED_LOOPBACK_SETTING, guardedLookup, resolveAllowed, type Resolver } from './egress.ts';

/** A resolver seam with fixed answers; a name it does not know does not exist. */
const fakeResolver =
  (table: Record<string, string[]>): Resolver =>
  async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const resolver = fakeResolver({
  'public.test': ['93.184.216.34'],
  'internal.test': ['10.0.0.5'],
  'metadata.test': ['169.254.169.254'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'ula.test': ['fd00::7'],
  'mixed.test': ['93.184.216.34', '192.168.0.10'],
  'loop.test': ['127.0.0.1', '::1'],
  'v6.test': ['2606:4700::1111'],
});

describe('the request-time check of callback_url', () => {
  const guard = createCallbackGuard({ resolver });

  it.each([
    ['https://10.0.0.1/hook', /is a private address/],
    ['https://172.16.5.4/hook', /is a private address/],
    ['https://192.168.1.1/hook', /is a private address/],
    ['https://100.64.0.1/hook', /carrier-grade NAT/],
    ['https://127.0.0.1:8443/hook', /is a loopback address/],
    ['https://169.254.169.254/latest/meta-data', /link-local/],
    ['https://[::1]/hook', /is a loopback address/],
    ['https://[::ffff:127.0.0.1]/hook', /is a loopback address/],
    ['https://[fd00::1]/hook', /is a private address/],
    ['https://internal.test/hook', /resolves to a private address/],
    ['https://metadata.test/hook', /resolves to a link-local address/],
    ['https://mapped.test/hook', /resolves to a loopback address/],
    ['https://ula.test/hook', /resolves to a private address/],
    ['https://mixed.test/hook', /resolves to a private address/],
    ['https://nowhere.test/hook', /does not resolve/],
    ['http://public.test/hook', /https/],
  ])('refuses %s', async (url, message) => {
    expect(await guard.check(url)).toMatch(message);
  });

  it('accepts public addresses and names that resolve only to them, without naming any address in a refusal', async () => {
    for (const url of ['https://public.test/x', 'https://v6.test:8443/x', 'https://93.184.216.34/x']) expect(await guard.check(url)).toBeUndefined();
    expect(await guard.check('https://internal.test/')).not.toContain('10.0.0.5');
  });

  it('names the development setting when it refuses a loopback receiver, https:// or plain http://', async () => {
    const embedded = createCallbackGuard({ resolver, loopbackSetting: EMBEDDED_LOOPBACK_SETTING });
    for (const url of ['https://127.0.0.1:8443/hook', 'https://loop.test/hook', 'http://127.0.0.1:9000/hook', 'http://localhost:9000/hook']) {
      expect(await embedded.check(url)).toMatch(/allowed in development only; to try webhooks locally, start the service with --allow-loopback-webhooks$/);
    }
    const cluster = createCallbackGuard({ resolver, loopbackSetting: CLUSTER_LOOPBACK_SETTING });
    expect(await cluster.check('http://127.0.0.1:9000/hook')).toMatch(/set webhooks\.allowLoopback in the service's config$/);
    // Not a loopback receiver: no setting would allow it, so none is named.
    expect(await embedded.check('https://internal.test/hook')).toBe('resolves to a private address');
    expect(await embedded.check('http://public.test/hook')).toMatch(/^must be an https:\/\/ URL/);
  });

  it('accepts a plain http:// loopback receiver under the development setting, and no other plain http://', async () => {
    const dev = createCallbackGuard({ resolver: fakeResolver({ localhost: ['127.0.0.1'], 'public.test': ['93.184.216.34'] }), allowLoopback: true });
    expect(await dev.check('http://127.0.0.1:9000/hook')).toBeUndefined();
    expect(await dev.check('http://localhost:9000/hook')).toBeUndefined();
    expect(await dev.check('http://public.test/hook')).toMatch(/^must be an https:\/\/ URL/);
    expect(await dev.check('http://10.0.0.1/hook')).toMatch(/^must be an https:\/\/ URL/);
    // `localhost` resolved elsewhere is not loopback: refused, plain or not.
    const rebound = createCallbackGuard({ resolver: fakeResolver({ localhost: ['93.184.216.34'] }), allowLoopback: true });
    expect(await rebound.check('http://localhost:9000/hook')).toMatch(/other than loopback/);
  });

  it('allows loopback only under the explicit development setting, and nothing else private with it', async () => {
    const dev = createCallbackGuard({ resolver, allowLoopback: true });
    expect(await dev.check('https://loop.test/')).toBeUndefined();
    expect(await dev.check('https://127.0.0.1:9/')).toBeUndefined();
    expect(await dev.check('https://mapped.test/')).toBeUndefined();
    expect(await dev.check('https://internal.test/')).toMatch(/private/);
    expect(await dev.check('https://169.254.169.254/')).toMatch(/link-local/);
  });

  it('does not fail an execute on a resolver that errs or hangs: the connect-time check still guards the delivery', async () => {
    const failing = createCallbackGuard({ resolver: async () => Promise.reject(Object.assign(new Error('SERVFAIL'), { code: 'ESERVFAIL' })) });
    expect(await failing.check('https://public.test/')).toBeUndefined();
    const hanging = createCallbackGuard({ resolver: () => new Promise(() => undefined), resolveTimeoutMs: 20 });
    expect(await hanging.check('https://public.test/')).toBeUndefined();
  });

  it('bounds the lookups in flight: past the bound a name is left to the connect-time check, a literal is still judged', async () => {
    const pending: Array<() => void> = [];
    const slow: Resolver = (host) => new Promise((done) => pending.push(() => done(resolver(host)))).then((r) => r as never);
    const guard = createCallbackGuard({ resolver: slow, maxLookupsInFlight: 2, resolveTimeoutMs: 60_000 });
    const first = [guard.check('https://internal.test/a'), guard.check('https://internal.test/b')];
    expect(await guard.check('https://internal.test/c')).toBeUndefined(); // not looked up: the bound was reached
    expect(await guard.check('https://10.0.0.1/')).toMatch(/is a private address/);
    for (const release of pending.splice(0)) release();
    expect(await Promise.all(first)).toEqual([expect.stringMatching(/private/), expect.stringMatching(/private/)]);
    const again = guard.check('https://internal.test/d'); // room again: looked up
    expect(pending).toHaveLength(1);
    pending[0]!();
    expect(await again).toMatch(/resolves to a private address/);
  });
});

describe('the connect-time lookup', () => {
  const lookup = (host: string, opts: { all?: boolean; family?: number }, policy = { resolver }) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number | undefined }>((resolve) =>
      guardedLookup(policy)(host, opts as never, (err, address, family) => resolve({ err, address, family })),
    );

  it('hands the socket only approved addresses, and refuses a name that now resolves inside (DNS rebinding)', async () => {
    expect(await lookup('public.test', {})).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    expect((await lookup('public.test', { all: true })).address).toEqual([{ address: '93.184.216.34', family: 4 }]);
    const rebound = await lookup('internal.test', { all: true });
    expect(rebound.err).toMatchObject({ code: 'blocked_address' });
    expect((await lookup('mixed.test', {})).err).toMatchObject({ code: 'blocked_address' });
    expect((await lookup('public.test', { family: 6 })).err).toMatchObject({ code: 'ENOTFOUND' });
  });

  it('resolveAllowed judges an IP literal itself, without the resolver', async () => {
    await expect(resolveAllowed('8.8.8.8', { resolver: () => Promise.reject(new Error('not called')) })).resolves.toEqual([{ address: '8.8.8.8', family: 4 }]);
    await expect(resolveAllowed('::1', {})).rejects.toMatchObject({ code: 'blocked_address' });
  });
});
