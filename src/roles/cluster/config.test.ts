import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ConfigError, clusterChain, clusterNamespace, loadClusterConfig, workerChainConfig } from './config.ts';

const chain = {
  name: 'base',
  chainId: 84532,
  rpcUrl: 'https://base-sepolia.example.com',
  entryPoint: '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
  simpleAccountFactory: '0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985',
  paymaster: '0x1111111111111111111111111111111111111111',
  beneficiary: '0x2222222222222222222222222222222222222222',
  treasury: '0x3333333333333333333333333333333333333333',
  tokens: [],
  worker: { address: 'aw-worker-base:50051' },
};
const keys = { AGENT_WALLET_PAYMASTER_SIGNER_KEY: `0x${'11'.repeat(32)}`, AGENT_WALLET_EXECUTOR_KEYS: ` 0x${'22'.repeat(32)} ,0x${'33'.repeat(32)},` };

function writeConfig(config: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'aw-config-')), 'config.yaml');
  writeFileSync(path, typeof config === 'string' ? config : stringify(config));
  return path;
}

describe('loadClusterConfig', () => {
  it('fills the defaults and finds chains by name', async () => {
    const config = await loadClusterConfig(writeConfig({ redis: { url: 'redis://r:6379' }, chains: [chain] }));
    expect(config.gateway.port).toBe(8080);
    expect(config.controller.leaseDurationSeconds).toBeGreaterThan(config.controller.renewDeadlineSeconds);
    expect(config.chains[0]!.worker.port).toBe(50051);
    expect(clusterChain(config, 'base').worker.address).toBe('aw-worker-base:50051');
    expect(() => clusterChain(config, 'arbitrum')).toThrow(ConfigError);
    expect(clusterNamespace(config, { POD_NAMESPACE: 'agents' })).toBe('agents');
    expect(clusterNamespace({ ...config, namespace: 'set' }, { POD_NAMESPACE: 'agents' })).toBe('set');
  });

  it('refuses what it cannot use, naming the field', async () => {
    await expect(loadClusterConfig(writeConfig({ chains: [chain] }))).rejects.toThrow(/redis/);
    await expect(loadClusterConfig(writeConfig({ redis: { url: 'redis://r' }, chains: [chain, chain] }))).rejects.toThrow(/twice/);
    await expect(loadClusterConfig(writeConfig({ redis: { url: 'redis://r' }, chains: [{ ...chain, paymaster: 'nope' }] }))).rejects.toThrow(
      /paymaster/,
    );
    await expect(loadClusterConfig(writeConfig('chains: [unclosed'))).rejects.toThrow(ConfigError);
    await expect(loadClusterConfig('/nonexistent/config.yaml')).rejects.toThrow(/cannot read/);
  });
});

describe('workerChainConfig', () => {
  it('adds the keys from the environment', () => {
    const full = workerChainConfig({ ...chain, name: 'base', worker: { ...chain.worker, port: 50051 } } as never, keys);
    expect(full.executorKeys).toEqual([`0x${'22'.repeat(32)}`, `0x${'33'.repeat(32)}`]);
    expect(full.paymasterSignerKey).toBe(keys.AGENT_WALLET_PAYMASTER_SIGNER_KEY);
    expect('worker' in full).toBe(false);
  });

  it('takes the x402 settler key from its own variable, apart from the executor keys; without it the worker has no settler', () => {
    const c = { ...chain, worker: { ...chain.worker, port: 50051 } } as never;
    const settler = `0x${'44'.repeat(32)}`;
    const full = workerChainConfig(c, { ...keys, AGENT_WALLET_X402_SETTLER_KEY: settler });
    expect(full.sendingAccounts).toEqual({ x402SettlerKey: settler });
    expect(full.executorKeys).not.toContain(settler);
    expect(workerChainConfig(c, keys).sendingAccounts).toEqual({});
    expect(() => workerChainConfig(c, { ...keys, AGENT_WALLET_X402_SETTLER_KEY: '0x12' })).toThrow(ConfigError);
  });

  it('takes the faucet account key from its own variable, and the faucet cap from the file', () => {
    const c = { ...chain, faucetCap: { native: '0.01', tokens: { aUSD: '100' } }, worker: { ...chain.worker, port: 50051 } } as never;
    const faucet = `0x${'55'.repeat(32)}`;
    const full = workerChainConfig(c, { ...keys, AGENT_WALLET_FAUCET_KEY: faucet });
    expect(full.sendingAccounts).toEqual({ faucetKey: faucet });
    expect(full.faucetCap).toEqual({ native: '0.01', tokens: { aUSD: '100' } });
    expect(full.executorKeys).not.toContain(faucet);
    expect(() => workerChainConfig(c, { ...keys, AGENT_WALLET_FAUCET_KEY: 'nope' })).toThrow(/AGENT_WALLET_FAUCET_KEY/);
  });

  it('takes the RPC URL from AGENT_WALLET_RPC_URL over the file, and needs one of them', () => {
    const c = { ...chain, worker: { ...chain.worker, port: 50051 } } as never;
    expect(workerChainConfig(c, { ...keys, AGENT_WALLET_RPC_URL: 'https://rpc.example.com/v2/key' }).rpcUrl).toBe('https://rpc.example.com/v2/key');
    const { rpcUrl: _omitted, ...withoutUrl } = chain;
    expect(() => workerChainConfig({ ...withoutUrl, worker: { ...chain.worker, port: 50051 } } as never, keys)).toThrow(/no RPC URL/);
  });

  it('takes the fallback RPC URLs from AGENT_WALLET_FALLBACK_RPC_URLS over the file, none by default', () => {
    const c = { ...chain, worker: { ...chain.worker, port: 50051 } } as never;
    expect(workerChainConfig(c, keys).fallbackRpcUrls).toEqual([]);
    const inFile = { ...chain, fallbackRpcUrls: ['https://b.example.com'], worker: { ...chain.worker, port: 50051 } } as never;
    expect(workerChainConfig(inFile, keys).fallbackRpcUrls).toEqual(['https://b.example.com']);
    const fromEnv = { ...keys, AGENT_WALLET_FALLBACK_RPC_URLS: ' https://c.example.com/v2/key , https://d.example.com/k ' };
    expect(workerChainConfig(inFile, fromEnv).fallbackRpcUrls).toEqual(['https://c.example.com/v2/key', 'https://d.example.com/k']);
    expect(() => workerChainConfig(c, { ...keys, AGENT_WALLET_FALLBACK_RPC_URLS: 'not a url' })).toThrow(ConfigError);
  });

  it('an erc7677 sponsor: its URL from AGENT_WALLET_SPONSOR_URL over the file, no paymaster signer key', () => {
    const c = { ...chain, sponsor: { kind: 'erc7677' }, worker: { ...chain.worker, port: 50051 } } as never;
    const { AGENT_WALLET_PAYMASTER_SIGNER_KEY: signerKey, ...noSigner } = keys;
    const full = workerChainConfig(c, { ...noSigner, AGENT_WALLET_SPONSOR_URL: 'https://pm.example.com/v2/secret-key' });
    expect(full.sponsor).toEqual({ kind: 'erc7677', url: 'https://pm.example.com/v2/secret-key', timeoutMs: 10_000 });
    expect(full.paymasterSignerKey).toBeUndefined();
    expect(() => workerChainConfig(c, noSigner)).toThrow(/AGENT_WALLET_SPONSOR_URL/);
    // A signer key given to a worker whose sponsorships a paymaster service signs is refused, not silently unused.
    expect(() => workerChainConfig(c, { ...keys, AGENT_WALLET_SPONSOR_URL: 'https://pm.example.com' })).toThrow(/belongs to the built-in sponsor/);
    // The built-in sponsor (the default) still needs it.
    expect(workerChainConfig({ ...chain, worker: { ...chain.worker, port: 50051 } } as never, keys).sponsor).toEqual({ kind: 'builtin' });
    expect(signerKey).toBeDefined();
  });

  it('refuses missing or malformed keys without echoing them', () => {
    const c = { ...chain, worker: { ...chain.worker, port: 50051 } } as never;
    expect(() => workerChainConfig(c, { AGENT_WALLET_EXECUTOR_KEYS: keys.AGENT_WALLET_EXECUTOR_KEYS })).toThrow(ConfigError);
    let message = '';
    try {
      workerChainConfig(c, { ...keys, AGENT_WALLET_EXECUTOR_KEYS: '0xsecret-but-malformed' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/executorKeys/);
    expect(message).not.toContain('0xsecret-but-malformed');
  });
});
