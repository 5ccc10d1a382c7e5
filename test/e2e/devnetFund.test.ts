/**
 * `agent-wallet devnet fund`: native ETH and the devnet's tokens (WETH wrapped from ether, the others minted) to an
 * agent's smart wallet, resolved through the API like `faucet`; and the refusals, above all of anything that is not
 * the local devnet (a manifest that is not one, a node that is not anvil).
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erc20Abi, parseEther, parseUnits, type Address } from 'viem';
import { fundOnDevnet, readDevnetManifest } from '../../src/devnet/fund.ts';
import { runCli } from '../support/cli.ts';
import { tempDir, testDevnet } from '../support/env.ts';
import { startTestService, type TestService } from '../support/service.ts';

const devnet = testDevnet();
const base = devnet.chain('base');
const tokenAddress = (symbol: string) => base.tokens.find((t) => t.symbol === symbol)!.address;
const balanceOf = (token: Address, owner: Address) =>
  devnet.publicClient('base').readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

let service: TestService;
let key: Awaited<ReturnType<TestService['newKey']>>;
let other: Awaited<ReturnType<TestService['newKey']>>;
beforeAll(async () => {
  service = await startTestService();
  key = await service.newKey();
  other = await service.newKey();
});
afterAll(() => service?.stop());

const fund = (args: string[], apiKey = key.apiKey) =>
  runCli(['devnet', 'fund', ...args, '--json'], {
    AGENT_WALLET_API_KEY: apiKey,
    AGENT_WALLET_BASE_URL: service.url,
    AGENT_WALLET_DEVNET_MANIFEST: devnet.manifestPath,
  });
const walletOf = async (api: typeof key.api, agentId: string) =>
  (await api.get(`/wallet?agent_id=${agentId}&chain=base`)).body.smart_wallet_address as Address;

describe('agent-wallet devnet fund', { timeout: 120_000 }, () => {
  it("sends WETH (wrapped from ether, so it stays backed) to the key's own agent's wallet, and no one else's", async () => {
    const wallet = await walletOf(key.api, 'fund-weth');
    const othersWallet = await walletOf(other.api, 'fund-weth');
    expect(othersWallet).not.toBe(wallet); // the same agent id under another key is another wallet
    const weth = tokenAddress('WETH');
    const backingBefore = await devnet.publicClient('base').getBalance({ address: weth });

    const r = await fund(['--agent-id', 'fund-weth', '--chain', 'base', '--token', 'WETH', '--amount', '10']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ chain: 'base', address: wallet, token: 'WETH', token_address: weth, amount: '10', amount_raw: '10000000000000000000', balance: '10' });
    expect(out.tx_hashes).toHaveLength(2); // deposit, then transfer
    expect(await balanceOf(weth, wallet)).toBe(parseEther('10'));
    expect(await balanceOf(weth, othersWallet)).toBe(0n);
    expect(await devnet.publicClient('base').getBalance({ address: weth })).toBe(backingBefore + parseEther('10'));
  });

  it('sends native ETH when no token is named, and mints the stablecoins', async () => {
    const wallet = await walletOf(key.api, 'fund-eth');
    const r = await fund(['--agent-id', 'fund-eth', '--chain', 'base', '--amount', '1.5']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ token: 'ETH', token_address: null, amount: '1.5', balance: '1.5' });
    expect(await devnet.publicClient('base').getBalance({ address: wallet })).toBe(parseEther('1.5'));

    const usdc = await fundOnDevnet({ manifest: devnet.manifest, chain: 'base', to: wallet, token: 'usdc', amount: '250.5' });
    expect(usdc).toMatchObject({ ok: true, value: { token: 'USDC', amount_raw: '250500000', balance: '250.5' } });
    expect(await balanceOf(tokenAddress('USDC'), wallet)).toBe(parseUnits('250.5', 6));
  });

  it('refuses bad input with a code, before anything is sent', async () => {
    const to = await walletOf(key.api, 'fund-bad');
    const refusal = async (p: { chain?: string; token?: string; amount?: string; to?: string }) => {
      const r = await fundOnDevnet({ manifest: devnet.manifest, chain: p.chain ?? 'base', to: p.to ?? to, token: p.token, amount: p.amount ?? '1' });
      return r.ok ? 'sent' : r.error.error;
    };
    expect(await refusal({ token: 'DAI' })).toBe('unknown_token');
    expect(await refusal({ chain: 'optimism' })).toBe('unknown_chain');
    expect(await refusal({ amount: '-1' })).toBe('invalid_amount');
    expect(await refusal({ amount: '0' })).toBe('invalid_amount');
    expect(await refusal({ amount: '1.0000001', token: 'USDC' })).toBe('invalid_amount'); // 7 decimals, USDC has 6
    expect(await refusal({ amount: '1e3' })).toBe('invalid_amount');
    expect(await refusal({ to: '0x1234' })).toBe('invalid_address');
    expect(await devnet.publicClient('base').getBalance({ address: to })).toBe(0n);
  });

  it('refuses anything that is not the local devnet: not a manifest, or a node that is not anvil', async () => {
    const dir = tempDir('aw-fund-');
    expect(readDevnetManifest(join(dir, 'nothing.json'))).toMatchObject({ ok: false, error: { error: 'manifest_not_found' } });
    const clusterConfig = join(dir, 'config.yaml');
    writeFileSync(clusterConfig, 'chains:\n  - name: base\n    rpcUrl: https://sepolia.base.org\n');
    expect(readDevnetManifest(clusterConfig)).toMatchObject({ ok: false, error: { error: 'not_a_devnet' } });

    // A JSON-RPC node that is not anvil (as a real network's would answer): nothing may be sent to it.
    const methods: string[] = [];
    const node = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const call = JSON.parse(body) as { id: number; method: string };
        methods.push(call.method);
        const result = call.method === 'web3_clientVersion' ? 'Geth/v1.14.0-stable/linux-amd64/go1.22' : call.method === 'eth_chainId' ? `0x${base.chainId.toString(16)}` : null;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result }));
      });
    });
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    try {
      const rpcUrl = `http://127.0.0.1:${(node.address() as { port: number }).port}`;
      const manifest = { ...devnet.manifest, chains: devnet.manifest.chains.map((c) => (c.name === 'base' ? { ...c, rpcUrl } : c)) };
      const path = join(dir, 'manifest.json');
      writeFileSync(path, JSON.stringify(manifest));
      const r = await runCli(['devnet', 'fund', '--address', devnet.manifest.accounts.funded[1]!.address, '--chain', 'base', '--amount', '1', '--manifest', path], {});
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/not_a_devnet: .*Geth.*never sends on a real network/);
      expect(methods).not.toContain('eth_sendTransaction');
      expect(methods).toContain('web3_clientVersion');
    } finally {
      node.close();
    }
  });

  it('asks for what is missing: --amount, and an agent or an address', async () => {
    const noAmount = await runCli(['devnet', 'fund', '--agent-id', 'a'], {});
    expect(noAmount.code).toBe(2);
    expect(noAmount.stderr).toMatch(/--amount is required/);
    const noAgent = await runCli(['devnet', 'fund', '--amount', '1', '--manifest', devnet.manifestPath], {});
    expect(noAgent.code).toBe(2);
    expect(noAgent.stderr).toMatch(/--agent-id .* or --address/);
  });
});
