import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHAIN_IDS } from '../config/chains.ts';
import { ClusterChainSchema } from './cluster/config.ts';
import { NETWORKS, NETWORKS_DIR, networkChainConfig, networkInputs, readNetworkFile, type NetworkName } from './networks.ts';

const operator = {
  rpcUrl: 'https://rpc.example.org/v1/KEY',
  paymaster: '0x00000000000000000000000000000000000000a1',
  beneficiary: '0x00000000000000000000000000000000000000b2',
  treasury: '0x00000000000000000000000000000000000000c3',
};
const keys = { paymasterSignerKey: `0x${'11'.repeat(32)}`, executorKeys: [`0x${'22'.repeat(32)}`] };

describe('shipped network configurations', () => {
  it('ships exactly the three testnets', () => {
    expect(readdirSync(NETWORKS_DIR).filter((f) => f.endsWith('.yaml')).sort()).toEqual(Object.keys(NETWORKS).map((n) => `${n}.yaml`).sort());
  });

  for (const [name, chain] of Object.entries(NETWORKS) as [NetworkName, (typeof NETWORKS)[NetworkName]][]) {
    it(`${name} parses with the service's ChainConfigSchema and the cluster's chain schema`, () => {
      const config = networkChainConfig(name, operator, keys);
      expect(config.name).toBe(chain);
      expect(config.chainId).toBe(CHAIN_IDS[chain]);
      expect(config.entryPoint).toBe('0x0000000071727De22E5E9d8BAf0edAc6f37da032');
      expect(config.simpleAccountFactory).toBe('0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985');
      expect(config.tokens.find((t) => t.symbol === 'USDC')?.decimals).toBe(6);
      expect(config.confirmations).toBeGreaterThan(1);
      // The same file as a cluster config's chain entry (the chart's merge): strict protocol sections included.
      const entry = ClusterChainSchema.safeParse({ ...readNetworkFile(name), ...operator, worker: { address: 'w:50051' } });
      expect(entry.error).toBeUndefined();
    });
  }

  it('names what the operator left out', () => {
    expect(() => networkChainConfig('sepolia', { ...operator, paymaster: undefined }, keys)).toThrow('network sepolia needs --paymaster');
    expect(() => networkChainConfig('sepolia', operator, { ...keys, paymasterSignerKey: undefined })).toThrow(/AGENT_WALLET_PAYMASTER_SIGNER_KEY/);
  });

  it('reads per-network flags: `name=value` for one, a bare value for every network', () => {
    const got = networkInputs({
      network: ['sepolia', 'base-sepolia'],
      'rpc-url': ['sepolia=https://eth.example/?key=a=b', 'base=https://base.example'],
      paymaster: [operator.paymaster],
      treasury: ['base-sepolia=0x00000000000000000000000000000000000000d4', operator.treasury],
    }, '0x00000000000000000000000000000000000000e5');
    expect(got).toEqual([
      { name: 'sepolia', inputs: { rpcUrl: 'https://eth.example/?key=a=b', paymaster: operator.paymaster, beneficiary: '0x00000000000000000000000000000000000000e5', treasury: operator.treasury } },
      { name: 'base-sepolia', inputs: { rpcUrl: 'https://base.example', paymaster: operator.paymaster, beneficiary: '0x00000000000000000000000000000000000000e5', treasury: '0x00000000000000000000000000000000000000d4' } },
    ]);
    expect(() => networkInputs({ network: ['goerli'] })).toThrow(/unknown --network goerli/);
  });

  it('--bundler-url makes an outside bundler bundle: no executor keys, the treasury standing in for the beneficiary', () => {
    const [first] = networkInputs({ network: ['base-sepolia'], 'rpc-url': [operator.rpcUrl], paymaster: [operator.paymaster], treasury: [operator.treasury], 'bundler-url': ['base=https://bundler.example/v2/KEY'] });
    const { name, inputs } = first!;
    expect(inputs).toMatchObject({ bundlerUrl: 'https://bundler.example/v2/KEY', beneficiary: operator.treasury });
    const config = networkChainConfig(name, inputs, { paymasterSignerKey: keys.paymasterSignerKey, executorKeys: [] });
    expect(config.bundler).toMatchObject({ kind: 'rpc', url: 'https://bundler.example/v2/KEY', sponsorshipTtlSeconds: 600 });
    expect(config.executorKeys).toEqual([]);
    // Executor keys in the environment with an outside bundler are refused, not silently unused.
    expect(() => networkChainConfig(name, inputs, keys)).toThrow(/executor keys belong to the built-in bundler/);
  });

  it('--sponsor-url makes an ERC-7677 paymaster service sponsor: no signer key in the environment then', () => {
    const [first] = networkInputs({ network: ['sepolia'], 'rpc-url': [operator.rpcUrl], paymaster: [operator.paymaster], treasury: [operator.treasury], beneficiary: [operator.beneficiary], 'sponsor-url': ['https://pm.example/v1/KEY'] });
    const { name, inputs } = first!;
    const config = networkChainConfig(name, inputs, { paymasterSignerKey: undefined, executorKeys: keys.executorKeys });
    expect(config.sponsor).toMatchObject({ kind: 'erc7677', url: 'https://pm.example/v1/KEY' });
    expect(() => networkChainConfig(name, inputs, keys)).toThrow(/paymasterSignerKey/);
  });
});
