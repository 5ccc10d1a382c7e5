import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { generatePrivateKey } from 'viem/accounts';
import { chainUnderTest } from '../../test/support/chainUnderTest.ts';
import { CliError } from '../lib/args.ts';
import { PAYMASTER_OPTIONS, runPaymasterCommand } from './paymaster.ts';

const run = promisify(execFile);

describe('agent-wallet paymaster: help and usage', () => {
  it('--help prints its own usage, naming every option it parses and the key variables', { timeout: 60_000 }, async () => {
    const { stdout } = await run(process.execPath, ['bin/agent-wallet.js', 'paymaster', '--help']);
    expect(stdout.startsWith('usage: agent-wallet paymaster [options]\n')).toBe(true);
    for (const option of Object.keys(PAYMASTER_OPTIONS)) expect(stdout).toContain(`--${option}`);
    for (const v of ['AGENT_WALLET_PAYMASTER_OWNER_KEY', 'AGENT_WALLET_PAYMASTER_SIGNER_KEY', 'AGENT_WALLET_RPC_URL']) expect(stdout).toContain(v);
    for (const verb of ['deploy', 'fund', 'stake', 'status', 'rotate start', 'rotate switched', 'rotate finish']) expect(stdout).toContain(`${verb} `);
  });

  it('refuses bad usage before sending anything: unknown verb, missing chain or RPC, wrong chain id, missing or malformed keys', async () => {
    const rpcUrl = chainUnderTest('base').config.rpcUrl;
    const usage = (argv: string[], env: NodeJS.ProcessEnv = {}) => expect(runPaymasterCommand(argv, env, () => {})).rejects.toThrow(CliError);
    await usage(['launch', '--chain', 'base', '--rpc-url', rpcUrl]);
    await usage(['rotate', 'begin', '--chain', 'base', '--rpc-url', rpcUrl]);
    await usage(['status', '--rpc-url', rpcUrl]);
    await usage(['status', '--chain', 'base']);
    await usage(['status', '--chain', 'mars', '--rpc-url', rpcUrl]);
    await expect(runPaymasterCommand(['status', '--chain', 'ethereum', '--rpc-url', rpcUrl, '--paymaster', '0x0000000000000000000000000000000000000001'], {}, () => {})).rejects.toThrow(/chain id is 84532, not ethereum's 11155111/);
    await expect(runPaymasterCommand(['deploy', '--chain', 'base', '--rpc-url', rpcUrl], {}, () => {})).rejects.toThrow(/AGENT_WALLET_PAYMASTER_OWNER_KEY/);
    const secret = 'not-a-key-but-secret';
    await expect(runPaymasterCommand(['deploy', '--chain', 'base-sepolia', '--rpc-url', rpcUrl], { AGENT_WALLET_PAYMASTER_OWNER_KEY: secret }, () => {})).rejects.toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(secret) }),
    );
    await expect(runPaymasterCommand(['deploy', '--chain', 'base', '--rpc-url', rpcUrl], { AGENT_WALLET_PAYMASTER_OWNER_KEY: generatePrivateKey() }, () => {})).rejects.toThrow(/--signer ADDRESS, or its key in AGENT_WALLET_PAYMASTER_SIGNER_KEY/);
    await usage(['fund', '--chain', 'base', '--rpc-url', rpcUrl, '--paymaster', '0x0000000000000000000000000000000000000001', '--amount', '1e18'], { AGENT_WALLET_PAYMASTER_OWNER_KEY: generatePrivateKey() });
    await expect(runPaymasterCommand(['rotate', 'finish', '--chain', 'base', '--rpc-url', rpcUrl, '--state', '/nonexistent/rotation.json', '--json'], { AGENT_WALLET_PAYMASTER_OWNER_KEY: generatePrivateKey() }, () => {})).resolves.toBe(3);
  });
});
