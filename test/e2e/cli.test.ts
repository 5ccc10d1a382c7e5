import { execFile, spawn } from 'node:child_process';
import { existsSync, realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { killHard, spawnServiceChild } from '../support/child.ts';
import { newServiceSecret, tempDir } from '../support/env.ts';
import { apiClient } from '../support/http.ts';
import { cli, cliFails, CLI_TEST_TIMEOUT_MS } from '../support/cliCommands.ts';

const run = promisify(execFile);
import { signWebhook } from '../../src/webhooks/sign.ts';


describe('agent-wallet keys', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('creates, lists, rotates, sets the mode of and revokes keys in a data dir no service owns', async () => {
    const dir = tempDir('aw-keys-');
    const { api_key } = JSON.parse(await cli('keys', 'create', '--mode', 'auto', '--name', 'ops bot', '--json', '--data-dir', dir));
    expect(api_key).toMatch(/^aw_[a-z0-9]{16}_/);
    const id = api_key.split('_')[1];
    const list = JSON.parse(await cli('keys', 'list', '--json', '--data-dir', dir));
    expect(list).toEqual([expect.objectContaining({ id, mode: 'auto', enabled: true, name: 'ops bot' })]);
    expect(JSON.stringify(list)).not.toContain(api_key.split('_')[2]); // the secret is stored nowhere

    const rotated = JSON.parse(await cli('keys', 'rotate', id, '--json', '--data-dir', dir));
    expect(rotated.api_key).not.toBe(api_key);
    expect(rotated.api_key.split('_')[1]).toBe(id); // same client id: the wallets survive rotation
    expect(JSON.parse(await cli('keys', 'set-mode', id, '--mode', 'manual', '--json', '--data-dir', dir))).toMatchObject({ id, mode: 'manual' });
    expect((await cliFails('keys', 'set-mode', id, '--mode', 'free', '--data-dir', dir)).stderr).toMatch(/usage: keys set-mode/);

    const revoked = JSON.parse(await cli('keys', 'revoke', id, '--json', '--data-dir', dir));
    expect(revoked).toMatchObject({ id, enabled: false });
    expect((await cliFails('keys', 'rotate', id, '--data-dir', dir)).stderr).toMatch(/revoked/);
    expect((await cliFails('keys', 'set-mode', id, '--mode', 'auto', '--data-dir', dir)).stderr).toMatch(/revoked/);
    // An unknown id is a refusal like the API's 404: one line, exit 3, no stack trace.
    const unknown = await cliFails('keys', 'revoke', 'nosuchkey0000000', '--data-dir', dir);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toBe('agent-wallet: no key with id nosuchkey0000000\n');
    const bad = await cliFails('keys', 'create', '--mode', 'free', '--data-dir', dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--mode must be one of/);
  });

  it('works while the service runs, and the new key is usable at once; revoke takes effect at once', async () => {
    const dir = tempDir('aw-keys-live-');
    const { url, child } = await spawnServiceChild(dir, newServiceSecret());
    try {
      const { api_key } = JSON.parse(await cli('keys', 'create', '--mode', 'sponsored', '--json', '--data-dir', dir));
      const api = apiClient(url, api_key);
      const wallet = await api.get('/wallet?agent_id=cli-agent');
      expect(wallet.status).toBe(200);
      await cli('keys', 'revoke', api_key.split('_')[1], '--data-dir', dir);
      const after = await api.get('/wallet?agent_id=cli-agent');
      expect(after.status).toBe(401);
      expect(after.body.error).toBe('invalid API key');
      // Through the admin socket too: one line and exit 3 for an unknown id.
      const unknown = await cliFails('keys', 'revoke', 'nosuchkey0000000', '--data-dir', dir);
      expect(unknown.code).toBe(3);
      expect(unknown.stderr).toBe('agent-wallet: no key with id nosuchkey0000000\n');
    } finally {
      await killHard(child);
    }
  });
});

describe('agent-wallet keys: webhook signing secrets', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('create prints the secret once; rotate-webhook-secret issues a new one and keeps the old for the overlap', async () => {
    const dir = tempDir('aw-keys-whsec-');
    const created = JSON.parse(await cli('keys', 'create', '--mode', 'sponsored', '--json', '--data-dir', dir));
    expect(created.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = created.api_key.split('_')[1];
    const list = await cli('keys', 'list', '--json', '--data-dir', dir);
    expect(list).not.toContain(created.webhook_secret.slice(6));
    const rotated = JSON.parse(await cli('keys', 'rotate-webhook-secret', id, '--overlap-seconds', '3600', '--json', '--data-dir', dir));
    expect(rotated.webhook_secret).toMatch(/^whsec_/);
    expect(rotated.webhook_secret).not.toBe(created.webhook_secret);
    expect(Date.parse(rotated.key.webhook_previous_secret_valid_until)).toBeGreaterThan(Date.now() + 3_500_000);
    const human = await cli('keys', 'rotate-webhook-secret', id, '--data-dir', dir);
    expect(human).toMatch(/new webhook signing secret for key .*\n\n  whsec_/s);
    expect(human).toMatch(/The previous secret also signs every delivery until/);
    const bad = await cliFails('keys', 'rotate-webhook-secret', id, '--overlap-seconds', 'soon', '--data-dir', dir);
    expect(bad.code).toBe(2);
  });
});

describe('agent-wallet webhooks verify', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('says valid for a delivery signed with the secret, invalid (exit 1) for a changed body or another secret', async () => {
    const dir = tempDir('aw-verify-');
    const { webhook_secret: secret } = JSON.parse(await cli('keys', 'create', '--mode', 'sponsored', '--json', '--data-dir', dir));
    const body = JSON.stringify({ id: 'evt_req-cli', type: 'execution.confirmed', version: 1, timestamp: new Date().toISOString(), data: { request_id: 'req-cli' } });
    const headers = signWebhook({ id: 'evt_req-cli', timestamp: Math.floor(Date.now() / 1000), body }, [secret]);
    writeFileSync(`${dir}/body.json`, body);
    writeFileSync(`${dir}/tampered.json`, body.replace('req-cli', 'req-evil'));
    const args = (file: string) => ['webhooks', 'verify', '--body-file', `${dir}/${file}`, ...Object.entries(headers).flatMap(([k, v]) => ['--header', `${k}: ${v}`])];
    const env = { ...process.env, AGENT_WALLET_WEBHOOK_SECRET: secret };
    const ok = await run(process.execPath, ['bin/agent-wallet.js', ...args('body.json')], { env });
    expect(ok.stdout).toBe('valid: execution.confirmed of req-cli (webhook-id evt_req-cli)\n');
    for (const [file, secretUsed] of [['tampered.json', secret], ['body.json', 'whsec_' + Buffer.alloc(32, 7).toString('base64')]] as const) {
      const failed = await run(process.execPath, ['bin/agent-wallet.js', ...args(file), '--json'], { env: { ...env, AGENT_WALLET_WEBHOOK_SECRET: secretUsed } }).then(
        () => expect.unreachable('should fail'),
        (e: { code: number; stdout: string }) => e,
      );
      expect(failed.code).toBe(1);
      expect(JSON.parse(failed.stdout)).toMatchObject({ valid: false, error: 'no_matching_signature' });
    }
  });
});

describe('agent-wallet dev (npm start)', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('starts the devnet and the service, prints a key and a curl line that works through to confirmed', async () => {
    const dir = tempDir('aw-dev-');
    const child = spawn(process.execPath, ['bin/agent-wallet.js', 'dev', '--port', '0', '--faucet-port', '0', '--data-dir', dir, '--quiet'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const out: string[] = [];
      const lines = createInterface({ input: child.stdout! });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`dev did not print its curl line: ${out.join('\n')}`)), 60_000);
        lines.on('line', (l) => {
          out.push(l);
          if (l.includes('curl -s') && l.includes('/status/')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      const text = out.join('\n');
      const url = /listening on (http:\/\/\S+)/.exec(text)![1]!;
      const key = /development API key \(sponsored\): (\S+)/.exec(text)![1]!;
      const body = JSON.parse(/-d '(\{.*\})'/.exec(text)![1]!);
      expect(body.calldata).toBe(encodeFunctionData({ abi: counterAbi, functionName: 'increment' }));
      const api = apiClient(url, key);
      const res = await api.post('/execute', body);
      expect(res.status).toBe(200);
      expect((await api.waitForTerminal(res.body.request_id)).status).toBe('confirmed');
    } finally {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    }
  });
});

describe('agent-wallet cluster roles: bad configuration', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('refuses a bad chain, a missing or invalid config, and missing secrets with exit 2 and a reason', async () => {
    const dir = tempDir('aw-role-');
    const noChain = await cliFails('chain-worker', '--chain', 'solana', '--config', `${dir}/none.yaml`);
    expect(noChain.code).toBe(2);
    expect(noChain.stderr).toMatch(/--chain must be one of ethereum, base, arbitrum/);

    const missing = await cliFails('gateway', '--config', `${dir}/none.yaml`);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read config/);

    const invalidPath = `${dir}/invalid.yaml`;
    writeFileSync(invalidPath, 'chains: []\n');
    const invalid = await cliFails('controller', '--config', invalidPath);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/invalid config .*redis/s);

    const validPath = `${dir}/valid.yaml`;
    writeFileSync(
      validPath,
      [
        'redis: { url: "redis://127.0.0.1:1" }',
        'chains:',
        '  - { name: base, chainId: 84532, rpcUrl: "http://127.0.0.1:1", entryPoint: "0x0000000071727De22E5E9d8BAf0edAc6f37da032",',
        '      simpleAccountFactory: "0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985", paymaster: "0x1111111111111111111111111111111111111111",',
        '      beneficiary: "0x2222222222222222222222222222222222222222", treasury: "0x3333333333333333333333333333333333333333",',
        '      tokens: [], worker: { address: "127.0.0.1:1" } }',
        '',
      ].join('\n'),
    );
    const noKeys = await cliFails('chain-worker', '--chain', 'base', '--config', validPath);
    expect(noKeys.code).toBe(2);
    expect(noKeys.stderr).toMatch(/AGENT_WALLET_PAYMASTER_SIGNER_KEY, AGENT_WALLET_EXECUTOR_KEYS \(the built-in bundler's only\), AGENT_WALLET_X402_SETTLER_KEY and AGENT_WALLET_FAUCET_KEY must hold/);
    const otherChain = await cliFails('chain-worker', '--chain', 'arb', '--config', validPath);
    expect(otherChain.stderr).toMatch(/chain arbitrum is not in the config/);
  });
});

describe('agent-wallet keys without --data-dir', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  const bin = resolve('bin/agent-wallet.js');
  /** The CLI run from `cwd`, with no AGENT_WALLET_* of this process but the runtime directory given. */
  const keysIn = (cwd: string, runtimeDir: string, ...args: string[]) => {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AGENT_WALLET_')));
    return run(process.execPath, [bin, 'keys', ...args], { cwd, env: { ...clean, AGENT_WALLET_RUNTIME_DIR: runtimeDir } }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
  };

  it('with no service running, refuses and names the flag, and makes no store of its own', async () => {
    const cwd = tempDir('aw-keys-cwd-');
    const failed = await keysIn(cwd, tempDir('aw-runtime-'), 'create', '--mode', 'sponsored');
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(/no running agent-wallet service found: pass --data-dir/);
    expect(existsSync(join(cwd, '.data'))).toBe(false);
  });

  it("uses the running dev service's store, wherever it is run from: its key works at once", async () => {
    const dir = tempDir('aw-keys-dev-');
    const runtimeDir = tempDir('aw-runtime-');
    const child = spawn(process.execPath, ['bin/agent-wallet.js', 'dev', '--port', '0', '--faucet-port', '0', '--data-dir', dir, '--quiet'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, AGENT_WALLET_RUNTIME_DIR: runtimeDir },
    });
    try {
      const lines = createInterface({ input: child.stdout! });
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('dev did not start')), 120_000);
        let found: string | undefined;
        lines.on('line', (l) => {
          found ??= /listening on (http:\/\/\S+)/.exec(l)?.[1];
          if (l.includes('Manage keys while this runs')) {
            clearTimeout(timer);
            resolve(found!);
          }
        });
      });
      const cwd = tempDir('aw-keys-cwd-');
      const created = await keysIn(cwd, runtimeDir, 'create', '--mode', 'sponsored', '--json');
      expect(created.code, created.stderr).toBe(0);
      expect(created.stderr).toContain(`data directory ${realpathSync(dir)}`);
      const { api_key } = JSON.parse(created.stdout);
      expect((await apiClient(url, api_key).get('/wallet?agent_id=cli-agent')).status).toBe(200);
      expect(existsSync(join(cwd, '.data'))).toBe(false);
    } finally {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    }
    // Stopped: nothing is found any more (the service took its file back).
    expect((await keysIn(tempDir('aw-keys-cwd-'), runtimeDir, 'list')).code).toBe(2);
  });
});
