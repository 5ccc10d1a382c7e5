import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { decodeEventLog, type Address, type Hex } from 'viem';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { testStablecoinAbi } from '../../src/devnet/contracts.ts';
import { DEVNET_FAUCET_ACCOUNT, startFaucet, type FaucetSettings, type RunningFaucet } from '../../src/faucet/index.ts';
import { connectChainWorker, type RemoteChainWorker } from '../../src/chain/grpc/client.ts';
import { serveChainWorker } from '../../src/chain/grpc/index.ts';
import type { ChainName } from '../../src/config/chains.ts';
import type { FaucetChainWorker } from '../../src/faucet/index.ts';
import { aUSDBalance, closeDevnetFaucetWorkers, devnetFaucetSettings, devnetFaucetWorkers, freshAddress, GENEROUS_LIMITS } from '../support/faucetUnderTest.ts';
import { tempDir, testDevnet } from '../support/env.ts';
import { freePort } from '../support/net.ts';
import { startRedis } from '../support/redis.ts';

const devnet = testDevnet();
/** The devnet's own faucet account (funded[4] in manifests older than that role). */
const faucetKeys = (devnet.manifest.accounts.faucet ?? devnet.manifest.accounts.funded[DEVNET_FAUCET_ACCOUNT])!;
const faucetAccount = faucetKeys.address;
const aUSD = (chain: 'ethereum' | 'base' | 'arbitrum') => devnet.chain(chain).tokens.find((t) => t.symbol === 'aUSD')!.address;
const totalSupply = (chain: 'ethereum' | 'base' | 'arbitrum') =>
  devnet.publicClient(chain).readContract({ address: aUSD(chain), abi: testStablecoinAbi, functionName: 'totalSupply' });

const running: RunningFaucet[] = [];
const clients: RemoteChainWorker[] = [];
afterEach(async () => {
  for (const f of running.splice(0)) await f.stop();
  for (const c of clients.splice(0)) await c.close();
});
afterAll(() => closeDevnetFaucetWorkers());

/** A faucet listening on a free port, reached over HTTP like any client; the devnet's workers (in process) send. */
async function faucet(settings: FaucetSettings = devnetFaucetSettings(), workers?: ReadonlyMap<ChainName, FaucetChainWorker>) {
  const f = await startFaucet({ settings, workers: workers ?? (await devnetFaucetWorkers()), port: 0 });
  running.push(f);
  const drip = async (body: unknown) => {
    const res = await fetch(`${f.url}/api/drip`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, any> };
  };
  return { ...f, drip };
}

describe('faucet on the devnet', () => {
  it('moves real aUSD: a transfer from the faucet account (not a mint), mined, with the balance it left', async () => {
    const { drip } = await faucet();
    const to = freshAddress();
    const supply = await totalSupply('base');
    const faucetBefore = await aUSDBalance('base', faucetAccount);

    const first = await drip({ address: to, chain: 'base' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ chain: 'base', address: to, token: 'aUSD', amount: '100', amount_raw: '100000000', balance: '100', balance_raw: '100000000' });
    expect(await aUSDBalance('base', to)).toBe(100_000_000n);

    const receipt = await devnet.publicClient('base').getTransactionReceipt({ hash: first.body.tx_hash as Hex });
    expect(receipt.status).toBe('success');
    expect(String(receipt.blockNumber)).toBe(first.body.block_number);
    const [transfer] = receipt.logs.map((l) => decodeEventLog({ abi: testStablecoinAbi, data: l.data, topics: l.topics }));
    expect(transfer).toMatchObject({ eventName: 'Transfer', args: { from: faucetAccount, to, value: 100_000_000n } });

    const second = await drip({ address: to.toLowerCase(), chain: 'base' });
    expect(second.body).toMatchObject({ balance: '200', balance_raw: '200000000' });
    expect(await aUSDBalance('base', to)).toBe(200_000_000n);
    expect(await aUSDBalance('base', faucetAccount)).toBe(faucetBefore - 200_000_000n);
    expect(await totalSupply('base')).toBe(supply);
  });

  it('429 per address (on that chain), with Retry-After and which limit; nothing is sent', async () => {
    const { drip } = await faucet(devnetFaucetSettings({ limits: { perAddress: { burst: 2, everySeconds: 3_600 }, perClient: GENEROUS_LIMITS.perClient } }));
    const to = freshAddress();
    expect((await drip({ address: to, chain: 'arbitrum' })).status).toBe(200);
    expect((await drip({ address: to, chain: 'arbitrum' })).status).toBe(200);
    const refused = await drip({ address: to, chain: 'arbitrum' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('3600');
    expect(refused.body).toEqual({
      error: 'rate_limited',
      message: 'this address has had its drips of aUSD on arbitrum for now; retry after 3600 s',
      limit: 'address',
      retry_after_seconds: 3600,
    });
    expect(await aUSDBalance('arbitrum', to)).toBe(200_000_000n);
    // The same address on another chain has its own drips.
    expect((await drip({ address: to, chain: 'ethereum' })).status).toBe(200);
  });

  it('429 per client address, over every recipient', async () => {
    const { drip } = await faucet(devnetFaucetSettings({ limits: { perAddress: GENEROUS_LIMITS.perAddress, perClient: { burst: 3, everySeconds: 600 } } }));
    for (let i = 0; i < 3; i++) expect((await drip({ address: freshAddress(), chain: 'ethereum' })).status).toBe(200);
    const to = freshAddress();
    const refused = await drip({ address: to, chain: 'base' });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: 'rate_limited', limit: 'client' });
    // A whole drip's worth of waiting, less what the bucket refilled while the three drips ran.
    expect(refused.headers.get('retry-after')).toBe(String(refused.body.retry_after_seconds));
    expect(refused.body.retry_after_seconds).toBeGreaterThan(590);
    expect(refused.body.retry_after_seconds).toBeLessThanOrEqual(600);
    expect(refused.body.message).toMatch(/^your client address has asked for too many drips/);
    expect(await aUSDBalance('base', to)).toBe(0n);
  });

  it('drips asked at once on one chain go out one after the other: consecutive nonces, every one mined', async () => {
    const { drip } = await faucet();
    const client = devnet.publicClient('ethereum');
    const recipients = Array.from({ length: 8 }, () => freshAddress());
    const answers = await Promise.all(recipients.map((address) => drip({ address, chain: 'ethereum' })));
    expect(answers.map((a) => a.status)).toEqual(recipients.map(() => 200));
    const nonces = await Promise.all(answers.map(async (a) => (await client.getTransaction({ hash: a.body.tx_hash as Hex })).nonce));
    const sorted = [...nonces].sort((x, y) => x - y);
    expect(sorted).toEqual(sorted.map((_, i) => sorted[0]! + i));
    for (const to of recipients) expect(await aUSDBalance('ethereum', to)).toBe(100_000_000n);
  });

  it('503 chain_unavailable when the chain worker does not answer, with Retry-After', async () => {
    const closedPort = await freePort();
    const away = connectChainWorker('base', `127.0.0.1:${closedPort}`, { retry: { attempts: 1 } });
    clients.push(away);
    const workers = new Map<ChainName, FaucetChainWorker>(await devnetFaucetWorkers());
    workers.set('base', away);
    const { drip } = await faucet(devnetFaucetSettings(), workers);
    const res = await drip({ address: freshAddress(), chain: 'base' });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.body).toMatchObject({ error: 'chain_unavailable' });
    expect(res.body.message).toMatch(/^base did not answer/);
    // The other chains are served all the same.
    expect((await drip({ address: freshAddress(), chain: 'arbitrum' })).status).toBe(200);
  });

  it('503 faucet_empty when the account holds less than a drip; nothing is sent', async () => {
    const { drip } = await faucet(devnetFaucetSettings({ amount: '20000000' })); // the account was funded with 10,000,000
    const to = freshAddress();
    const res = await drip({ address: to, chain: 'base' });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error: 'faucet_empty', message: 'the faucet has run out of aUSD on base; the operators have been told' });
    expect(await aUSDBalance('base', to)).toBe(0n);
  });

  it('bounds the wait for the receipt: 503 receipt_timeout with the hash; the transfer lands later and the next drip follows it', async () => {
    const { drip } = await faucet(devnetFaucetSettings({ receiptTimeoutMs: 300 }));
    const client = devnet.publicClient('arbitrum');
    const rpc = (method: string, params: unknown[] = []) => client.request({ method: method as any, params: params as any });
    const to = freshAddress();
    await rpc('evm_setAutomine', [false]);
    let pending: Record<string, any>;
    try {
      const res = await drip({ address: to, chain: 'arbitrum' });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('30');
      expect(res.body).toMatchObject({ error: 'receipt_timeout', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      pending = res.body;
      expect(await aUSDBalance('arbitrum', to)).toBe(0n);
    } finally {
      await rpc('evm_mine');
      await rpc('evm_setAutomine', [true]);
    }
    expect((await client.getTransactionReceipt({ hash: pending.tx_hash })).status).toBe('success');
    const next = await drip({ address: to, chain: 'arbitrum' });
    expect(next.status).toBe(200);
    expect(next.body.balance_raw).toBe('200000000');
  });
});

/** Runs `agent-wallet faucet-server <args>` until it prints its URL; `stop()` sends SIGTERM and resolves with the exit code. */
async function spawnFaucet(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(process.execPath, ['bin/agent-wallet.js', 'faucet-server', ...args], { stdio: ['ignore', 'pipe', 'inherit'], env });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited;
  };
  try {
    const [, url, from] = await new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the faucet did not print its URL in 30 s')), 30_000);
      child.once('exit', (code) => reject(new Error(`the faucet exited with ${code}`)));
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const m = /^aUSD faucet listening on (http:\/\/\S+) \(sends from (0x[0-9a-fA-F]{40})\)$/.exec(line);
        if (!m) return;
        clearTimeout(timer);
        resolve(m);
      });
    });
    const drip = async (body: unknown) => {
      const res = await fetch(`${url}/api/drip`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    return { url: url!, from: from!, drip, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

describe('agent-wallet faucet-server (the role)', () => {
  const run = promisify(execFile);
  const fails = async (args: string[], env: NodeJS.ProcessEnv = process.env) => {
    try {
      await run(process.execPath, ['bin/agent-wallet.js', 'faucet-server', ...args], { env });
    } catch (e) {
      return e as { code: number; stderr: string };
    }
    throw new Error(`agent-wallet faucet-server ${args.join(' ')} succeeded`);
  };

  it('serves the devnet of --data-dir on --port, prints its URL and stops on SIGTERM', async () => {
    const dataDir = dirname(dirname(devnet.manifestPath)); // <data-dir>/devnet/manifest.json
    const faucet = await spawnFaucet(['--port', '0', '--data-dir', dataDir, '--quiet']);
    try {
      expect(faucet.from).toBe(faucetAccount);
      const to = freshAddress();
      expect((await faucet.drip({ address: to, chain: 'eth' })).status).toBe(200);
      expect(await aUSDBalance('ethereum', to)).toBe(100_000_000n);
    } finally {
      expect(await faucet.stop()).toBe(0);
    }
  });

  it('a deployment: the YAML file, each chain by its chain worker over gRPC (the worker holds the key), limits in Redis that outlive a restart', async () => {
    const redis = await startRedis();
    const local = await devnetFaucetWorkers();
    const servers = await Promise.all((['base', 'arbitrum'] as const).map((name) => serveChainWorker(local.get(name)!, { port: 0 })));
    const [baseWorker, arbitrumWorker] = servers.map((w) => `127.0.0.1:${w.port}`);
    try {
      const config = join(tempDir('aw-faucet-deploy-'), 'faucet.yaml');
      const chains = ['base', 'arbitrum'] as const;
      writeFileSync(
        config,
        [
          'port: 0',
          'host: 127.0.0.1',
          'amount: "2.5"',
          'limits: { perAddress: { burst: 1, everySeconds: 86400 } }',
          'receiptPollMs: 20',
          `redis: { url: "${redis.url}" }`,
          'logLevel: warn',
          'chains:',
          ...chains.map(
            (name, i) =>
              `  - { name: ${name}, chainId: ${devnet.chain(name).chainId}, chainWorker: "${[baseWorker, arbitrumWorker][i]}", token: { address: "${aUSD(name)}" } }`,
          ),
        ].join('\n'),
      );
      // No key and no RPC URL in the faucet's environment: the chain workers have them.
      const { AGENT_WALLET_FAUCET_KEY: _k, ...env } = process.env;
      const to = freshAddress();
      const first = await spawnFaucet(['--config', config], env);
      try {
        expect(first.from).toBe(faucetAccount);
        expect((await first.drip({ address: to, chain: 'base' })).body).toMatchObject({ amount: '2.5', amount_raw: '2500000', balance_raw: '2500000' });
        expect((await first.drip({ address: to, chain: 'ethereum' })).body).toMatchObject({ error: 'unsupported_chain' });
      } finally {
        expect(await first.stop()).toBe(0);
      }
      const second = await spawnFaucet(['--config', config], env);
      try {
        const again = await second.drip({ address: to, chain: 'base' });
        expect(again.status).toBe(429);
        expect(again.body).toMatchObject({ error: 'rate_limited', limit: 'address' });
        expect(again.body.retry_after_seconds).toBeGreaterThan(86_000);
        expect((await second.drip({ address: to, chain: 'arbitrum' })).status).toBe(200);
      } finally {
        expect(await second.stop()).toBe(0);
      }
      expect(await aUSDBalance('base', to)).toBe(2_500_000n);
    } finally {
      for (const server of servers) await server.close(0);
      await redis.stop();
    }
  });

  it('refuses a data dir without a devnet, and a deployment config without its chain workers: exit 2 and the reason', async () => {
    const noDevnet = await fails(['--data-dir', tempDir('aw-faucet-none-')]);
    expect(noDevnet.code).toBe(2);
    expect(noDevnet.stderr).toMatch(/no devnet manifest at .*devnet\/manifest\.json: start the devnet first/);

    const config = join(tempDir('aw-faucet-cfg-'), 'faucet.yaml');
    writeFileSync(config, `chains: [{ name: base, chainId: 84532, rpcUrl: "http://127.0.0.1:1", token: { address: "${aUSD('base') as Address}" } }]\n`);
    const noWorker = await fails(['--config', config]);
    expect(noWorker.code).toBe(2);
    expect(noWorker.stderr).toMatch(/invalid faucet config .*chainWorker/s);
  });

  it('`agent-wallet faucet` with the service’s options says the service is faucet-server (faucet is the client command)', async () => {
    const e = await run(process.execPath, ['bin/agent-wallet.js', 'faucet', '--data-dir', tempDir('aw-faucet-client-')]).then(
      () => ({ code: 0, stderr: '' }),
      (x: { code: number; stderr: string }) => x,
    );
    expect(e.code).toBe(2);
    expect(e.stderr).toMatch(/the faucet service itself is `agent-wallet faucet-server`/);
  });
});
