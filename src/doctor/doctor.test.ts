import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import type { ChainConfig } from '../config/chainConfig.ts';
import { paymasterDeployData } from '../devnet/contracts.ts';
import { testDevnet } from '../../test/support/env.ts';
import { freePort } from '../../test/support/net.ts';
import { startAlto } from '../../test/support/alto.ts';
import { startErc7677Server } from '../../test/support/erc7677Server.ts';
import { doctorTarget, healthy, runDoctor, type CheckResult, type DoctorTarget } from './index.ts';

/**
 * The doctor against the run's devnet, with faults injected in the configuration it is given (or, for the RPC's
 * methods, by a proxy that refuses some): the chain itself is never changed but for one paymaster deployed here.
 */
const devnet = testDevnet();
const base = devnet.chainConfigs().find((c) => c.name === 'base')!;
const target = (change: Partial<ChainConfig> = {}): DoctorTarget => doctorTarget({ ...base, ...change });
const find = (results: CheckResult[], id: string) => {
  const r = results.filter((x) => x.id === id);
  if (r.length === 0) throw new Error(`no ${id} result in ${JSON.stringify(results, null, 2)}`);
  return r;
};
const failsOf = (results: CheckResult[]) => results.filter((r) => r.status === 'fail').map((r) => r.id);

describe('agent-wallet doctor against the devnet', () => {
  it("passes the devnet's own configuration on every chain", async () => {
    const results = await runDoctor(devnet.chainConfigs().map(doctorTarget));
    expect(failsOf(results)).toEqual([]);
    expect(healthy(results)).toBe(true);
    // anvil serves every method the service calls.
    for (const id of ['rpc.eth_simulateV1', 'rpc.debug_traceCall', 'rpc.eth_call-stateOverride', 'rpc.eth_getLogs-range', 'rpc.eth_maxPriorityFeePerGas']) {
      expect(find(results, id).every((r) => r.status === 'ok')).toBe(true);
    }
    expect(find(results, 'bundler.entryPoints')[0]!.detail).toBe('built-in bundler');
    expect(find(results, 'paymaster.stake').every((r) => r.status === 'ok')).toBe(true);
    // Every configured protocol section was looked at.
    const families = devnet.chainConfigs().flatMap((c) => Object.keys(c.protocols).map((f) => `${c.name}/protocols.${f}`));
    expect(results.filter((r) => r.id.startsWith('protocols.')).map((r) => `${r.chain}/${r.id}`).sort()).toEqual(families.sort());
  });

  it('a wrong chain id fails first, and nothing else is checked on that chain', async () => {
    const results = await runDoctor([target({ chainId: 8453 })]);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ id: 'chain.id', status: 'fail' });
    expect(results[0]!.detail).toContain('answers chain id 84532; the configuration says 8453');
    expect(results[0]!.fix).toMatch(/point rpcUrl at a node of chain 8453/);
  });

  it('an address with no code fails with the canonical deployment to use', async () => {
    const nobody = privateKeyToAddress(generatePrivateKey());
    const results = await runDoctor([target({ simpleAccountFactory: nobody, entryPoint: privateKeyToAddress(generatePrivateKey()) })]);
    const [factory] = find(results, 'contracts.factory');
    expect(factory).toMatchObject({ status: 'fail', detail: `no code at the SimpleAccountFactory ${nobody}` });
    expect(factory!.fix).toContain('0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985');
    expect(find(results, 'contracts.entryPoint')[0]!.fix).toContain('0x0000000071727De22E5E9d8BAf0edAc6f37da032');
  });

  it("a token's decimals or x402 domain other than the token's fails, with the values to set", async () => {
    const tokens = base.tokens.map((t) => (t.symbol === 'USDC' ? { ...t, eip3009: { name: 'USD Coin', version: '2' } } : t.symbol === 'USDT' ? { ...t, decimals: 18 } : t));
    const results = await runDoctor([target({ tokens })]);
    const usdc = base.tokens.find((t) => t.symbol === 'USDC')!;
    expect(find(results, 'token.USDC')[0]).toMatchObject({ status: 'fail', fix: `set tokens[USDC].eip3009 to { name: "${usdc.eip3009!.name}", version: "${usdc.eip3009!.version}" }` });
    expect(find(results, 'token.USDT')[0]).toMatchObject({ status: 'fail', fix: 'set tokens[USDT].decimals to 6' });
    expect(find(results, 'token.aUSD')[0]!.status).toBe('ok');
  });

  it('a protocol address with no code fails, naming the field', async () => {
    const compound = base.protocols.compoundV3 as { markets: { name: string; comet: string }[] };
    const gone = privateKeyToAddress(generatePrivateKey());
    const results = await runDoctor([target({ protocols: { ...base.protocols, compoundV3: { markets: [{ ...compound.markets[0]!, comet: gone }] } } })]);
    const [r] = find(results, 'protocols.compoundV3');
    expect(r).toMatchObject({ status: 'fail', detail: `no code at markets[0].comet ${gone}` });
    expect(r!.fix).toMatch(/correct protocols.compoundV3/);
  });

  it('an executor without native coin fails with the address to fund', async () => {
    const broke = generatePrivateKey();
    const results = await runDoctor([target({ executorKeys: [base.executorKeys[0]!, broke] })]);
    const executors = find(results, 'executor.balance');
    expect(executors.map((r) => r.status)).toEqual(['ok', 'fail']);
    expect(executors[1]!.detail).toMatch(/0 ETH, about 0 bundles/);
    expect(executors[1]!.fix).toContain(`send native coin to ${privateKeyToAddress(broke)} on base`);
  });

  it('a paymaster signed for by another key fails: every sponsorship would be refused', async () => {
    const results = await runDoctor([target({ paymasterSignerKey: generatePrivateKey() })]);
    expect(find(results, 'paymaster.signer')[0]).toMatchObject({ status: 'fail' });
    expect(find(results, 'paymaster.signer')[0]!.fix).toMatch(/signer is immutable/);
  });

  it('an ERC-7677 sponsor: no signer key to compare, and none needed (the service holds it)', async () => {
    const results = await runDoctor([target({ paymasterSignerKey: undefined, sponsor: { kind: 'erc7677', url: 'http://127.0.0.1:1/pm', timeoutMs: 1_000 } })]);
    expect(find(results, 'paymaster.signer')[0]).toMatchObject({ status: 'ok' });
    expect(find(results, 'paymaster.signer')[0]!.detail).toMatch(/ERC-7677 paymaster service holds its key/);
  });

  it('a paymaster with no deposit (and no stake) fails with how to deposit', async () => {
    const wallet = devnet.walletClient('base', 0);
    const client = devnet.publicClient('base');
    const hash = await wallet.sendTransaction({ data: paymasterDeployData(privateKeyToAddress(base.paymasterSignerKey!)) });
    const { contractAddress } = await client.waitForTransactionReceipt({ hash });
    const results = await runDoctor([target({ paymaster: contractAddress! })]);
    expect(find(results, 'paymaster.signer')[0]!.status).toBe('ok');
    const [deposit] = find(results, 'paymaster.deposit');
    expect(deposit).toMatchObject({ status: 'fail' });
    expect(deposit!.detail).toMatch(/^deposit 0 ETH in the EntryPoint: about 0 sponsored operations/);
    expect(deposit!.fix).toContain(`agent-wallet paymaster fund --chain base --paymaster ${contractAddress} --amount ETH`);
    // The built-in bundler does not ask for a stake; an outside one would.
    expect(find(results, 'paymaster.stake')[0]!.status).toBe('ok');
    expect(failsOf(results)).toEqual(['paymaster.deposit']);
  });

  it('a dead RPC URL fails once, with what to check', async () => {
    const results = await runDoctor([target({ rpcUrl: `http://127.0.0.1:${await freePort()}/` })], { timeoutMs: 2_000 });
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ id: 'rpc.reachable', status: 'fail' });
    expect(results[0]!.fix).toMatch(/check the chain's RPC URL/);
  });

  it("an outside bundler URL that is no bundler fails; the executors are then the bundler's business", async () => {
    // A plain node at the bundler's URL: a real JSON-RPC server without eth_supportedEntryPoints.
    const notABundler = await runDoctor([{ ...target(), bundlerUrl: base.rpcUrl }]);
    const [bundler] = find(notABundler, 'bundler.entryPoints');
    expect(bundler).toMatchObject({ status: 'fail', detail: expect.stringMatching(/does not answer eth_supportedEntryPoints \(error /) });
    expect(bundler!.fix).toMatch(/a bundler URL that serves EntryPoint v0.7 on chain 84532/);
    expect(find(notABundler, 'executor.balance')).toEqual([expect.objectContaining({ status: 'ok', detail: 'an outside bundler sends the bundles: no executor accounts' })]);
    const dead = await runDoctor([{ ...target(), bundlerUrl: `http://127.0.0.1:${await freePort()}/rpc?apikey=SECRET` }]);
    const [gone] = find(dead, 'bundler.entryPoints');
    expect(gone!.status).toBe('fail');
    expect(gone!.detail).not.toContain('SECRET'); // a hosted bundler's key stays out of the output
  });

  it('a configuration with Alto as its outside bundler passes: its entry points include ours, the paymaster staked', async () => {
    const alto = await startAlto('base');
    try {
      const results = await runDoctor([doctorTarget({ ...base, executorKeys: [], bundler: alto.bundlerConfig() })]);
      expect(failsOf(results)).toEqual([]);
      expect(find(results, 'bundler.entryPoints')[0]).toMatchObject({ status: 'ok' });
    } finally {
      await alto.stop();
    }
  });

  it('a fallback RPC URL of another chain fails; a dead one warns; one of this chain passes', async () => {
    const other = devnet.chain('arbitrum').rpcUrl;
    const dead = `http://127.0.0.1:${await freePort()}/v2/SECRET`;
    const results = await runDoctor([target({ fallbackRpcUrls: [base.rpcUrl, other, dead] })], { timeoutMs: 2_000 });
    expect(find(results, 'rpc.fallback-1')[0]).toMatchObject({ status: 'ok' });
    expect(find(results, 'rpc.fallback-2')[0]).toMatchObject({ status: 'fail', detail: expect.stringContaining('answers chain id 421614; the configuration says 84532') });
    expect(find(results, 'rpc.fallback-3')[0]).toMatchObject({ status: 'warn' });
    expect(JSON.stringify(results)).not.toContain('SECRET');
  });

  it('an ERC-7677 paymaster service: one that sponsors passes; one for another paymaster, or none at the URL, fails', async () => {
    const service = await startErc7677Server('base');
    try {
      const erc7677 = (paymaster: `0x${string}`, url: string) =>
        target({ paymaster, sponsor: { kind: 'erc7677', url, timeoutMs: 2_000 } as ChainConfig['sponsor'] });
      const good = await runDoctor([erc7677(service.paymaster, service.url)]);
      expect(find(good, 'sponsor.service')[0]).toMatchObject({ status: 'ok', detail: expect.stringContaining(service.paymaster) });
      const otherPaymaster = await runDoctor([erc7677(base.paymaster, service.url)]);
      expect(find(otherPaymaster, 'sponsor.service')[0]).toMatchObject({ status: 'fail', detail: expect.stringContaining('it answered for paymaster') });
      const none = await runDoctor([erc7677(service.paymaster, `http://127.0.0.1:${await freePort()}/v1/SECRET`)]);
      expect(find(none, 'sponsor.service')[0]).toMatchObject({ status: 'fail' });
      expect(JSON.stringify(none)).not.toContain('SECRET');
    } finally {
      await service.close();
    }
  });

  describe('an RPC endpoint without some methods', () => {
    let proxy: Server;
    let url: string;
    const refused = new Set(['eth_simulateV1', 'debug_traceCall', 'eth_maxPriorityFeePerGas']);
    beforeAll(async () => {
      // What a hosted endpoint without those methods answers: JSON-RPC -32601 for them, the node for the rest.
      proxy = createServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown; method: string } | { id: unknown; method: string }[];
        const one = async (m: { id: unknown; method: string }) => {
          if (refused.has(m.method)) return { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `the method ${m.method} does not exist/is not available` } };
          const r = await fetch(base.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(m) });
          return r.json();
        };
        const answer = Array.isArray(body) ? await Promise.all(body.map(one)) : await one(body);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(answer));
      });
      await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/`;
    });
    afterAll(() => new Promise<void>((r) => proxy.close(() => r())));

    it('says which feature degrades, and fails for the one no operation can do without', async () => {
      const results = await runDoctor([target({ rpcUrl: url })]);
      const [simulate] = find(results, 'rpc.eth_simulateV1');
      expect(simulate).toMatchObject({ status: 'warn' });
      expect(simulate!.detail).toMatch(/outflow or USD rules is refused/);
      expect(find(results, 'rpc.debug_traceCall')[0]).toMatchObject({ status: 'warn' });
      const [tip] = find(results, 'rpc.eth_maxPriorityFeePerGas');
      expect(tip).toMatchObject({ status: 'fail', detail: expect.stringMatching(/No operation can be priced/) });
      expect(find(results, 'rpc.eth_call-stateOverride')[0]!.status).toBe('ok');
    });
  });
});
