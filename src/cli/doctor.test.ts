import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCli } from '../../test/support/cli.ts';
import { tempDir, testDevnet } from '../../test/support/env.ts';

/** `agent-wallet doctor` as an operator runs it (docs/operations.md, "Pre-flight"): on the devnet's manifest, and on a cluster's config file. */
const devnet = testDevnet();
const devnetDataDir = dirname(dirname(devnet.manifestPath));

describe('agent-wallet doctor (the command)', () => {
  it("checks a devnet's configuration: a table, exit 0; --json for machines", async () => {
    const table = await runCli(['doctor', '--data-dir', devnetDataDir, '--chain', 'arb'], {});
    expect(table.stderr).toBe('');
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^CHAIN +CHECK +STATUS +DETAIL/);
    expect(table.stdout).toMatch(/arbitrum +paymaster\.deposit +ok/);
    expect(table.stdout).not.toMatch(/ethereum|What to do/);

    const json = await runCli(['doctor', '--data-dir', devnetDataDir, '--json'], {});
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as { ok: boolean; results: { id: string; chain: string; status: string; detail: string; fix: string }[] };
    expect(report.ok).toBe(true);
    expect(new Set(report.results.map((r) => r.chain))).toEqual(new Set(['ethereum', 'base', 'arbitrum']));
  });

  it("fails a cluster's config whose chain id is wrong: exit 1 and what to do; keys from the worker's variables", async () => {
    const chain = devnet.chainConfigs().find((c) => c.name === 'base')!;
    const dir = tempDir();
    const file = join(dir, 'config.yaml');
    const { paymasterSignerKey, executorKeys, sendingAccounts: _s, ...pub } = chain;
    writeFileSync(file, stringify({ redis: { url: 'redis://127.0.0.1:6379' }, chains: [{ ...pub, chainId: 1, worker: { address: 'w:50051' } }] }));
    const run = await runCli(['doctor', '--config', file], { AGENT_WALLET_PAYMASTER_SIGNER_KEY: paymasterSignerKey, AGENT_WALLET_EXECUTOR_KEYS: executorKeys.join(',') });
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/base +chain\.id +fail +http:\/\/127\.0\.0\.1:\d+ answers chain id 84532; the configuration says 1/);
    expect(run.stdout).toMatch(/What to do:\n +fail base chain\.id: point rpcUrl at a node of chain 1/);

    // The same file with the right id passes, its executors' balances checked from the keys given.
    writeFileSync(file, stringify({ redis: { url: 'redis://127.0.0.1:6379' }, chains: [{ ...pub, worker: { address: 'w:50051' } }] }));
    const fixed = await runCli(['doctor', '--config', file, '--json'], { AGENT_WALLET_PAYMASTER_SIGNER_KEY: paymasterSignerKey, AGENT_WALLET_EXECUTOR_KEYS: executorKeys.join(',') });
    expect(fixed.code).toBe(0);
    const results = (JSON.parse(fixed.stdout) as { results: { id: string; status: string }[] }).results;
    expect(results.filter((r) => r.id === 'executor.balance')).toHaveLength(executorKeys.length);
    expect(results.find((r) => r.id === 'paymaster.signer')?.status).toBe('ok');
  });

  it("names every option the commands parse in their help", async () => {
    const { DOCTOR_OPTIONS } = await import('./doctor.ts');
    const { SERVE_OPTIONS } = await import('../roles/serve.ts');
    const { DOCTOR_HELP, SERVE_HELP } = await import('./doctorHelp.ts');
    for (const o of Object.keys(DOCTOR_OPTIONS)) expect(DOCTOR_HELP).toContain(`--${o}`);
    for (const o of Object.keys(SERVE_OPTIONS)) expect(SERVE_HELP).toContain(`--${o}`);
  });

  it('refuses two configurations at once and an unknown network', async () => {
    expect((await runCli(['doctor', '--config', 'x.yaml', '--data-dir', devnetDataDir], {})).stderr).toMatch(/give one configuration/);
    // No flag and no running `dev` (an empty runtime directory): nothing to check, and it says what to pass.
    const none = await runCli(['doctor'], { AGENT_WALLET_RUNTIME_DIR: tempDir() });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/nothing to check: pass --config F/);
    const unknown = await runCli(['doctor', '--network', 'goerli'], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown --network goerli: one of sepolia, base-sepolia, arbitrum-sepolia/);
  });
});
