import { describe, expect, it } from 'vitest';
import { privateKeyToAddress } from 'viem/accounts';
import { runCli } from '../../test/support/cli.ts';
import { tempDir, testDevnet } from '../../test/support/env.ts';
import { freePort } from '../../test/support/net.ts';
import { until } from '../../test/support/until.ts';

/**
 * `serve --network` against the run's devnet standing in for Base Sepolia (same chain id): the shipped file names
 * Circle's USDC and the real protocol deployments, which the devnet does not have, so the pre-flight checks fail
 * there and the service refuses to start; the same flags give `doctor` the same inputs.
 * The example of docs/operations.md, "In one process: `agent-wallet serve --network`", with the devnet for Base Sepolia.
 */
const devnet = testDevnet();
const base = devnet.chainConfigs().find((c) => c.name === 'base')!;
const flags = ['--network', 'base-sepolia', '--rpc-url', `base=${base.rpcUrl}`, '--paymaster', base.paymaster, '--treasury', base.treasury];
const env = {
  AGENT_WALLET_PAYMASTER_SIGNER_KEY: base.paymasterSignerKey,
  AGENT_WALLET_EXECUTOR_KEYS: base.executorKeys.join(','),
  AGENT_WALLET_SERVICE_SECRET: 'x'.repeat(40),
  // Where the service registers itself for `keys` (test/globalSetup.ts sets it): not the user's own directory.
  AGENT_WALLET_RUNTIME_DIR: process.env.AGENT_WALLET_RUNTIME_DIR,
};

describe('agent-wallet serve --network', () => {
  it('runs the doctor first and does not start when a check fails; doctor takes the same flags', async () => {
    const dataDir = tempDir();
    const run = await runCli(['serve', ...flags, '--data-dir', dataDir, '--port', '0'], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/doctor: fail base token\.USDC: no code at USDC 0x036CbD53842c5426634e7929541eC2318f3dCF7e/);
    expect(run.stdout).toMatch(/doctor: fail base protocols\.compoundV3/);
    expect(run.stdout).not.toMatch(/listening/);
    expect(run.stderr).toMatch(/a pre-flight check failed/);

    const doctor = await runCli(['doctor', ...flags, '--json'], env);
    expect(doctor.code).toBe(1);
    const { results } = JSON.parse(doctor.stdout) as { results: { id: string; status: string; detail: string }[] };
    expect(results.filter((r) => r.status === 'fail').map((r) => r.id).sort()).toEqual(['protocols.compoundV3', 'protocols.morphoBlue', 'protocols.uniswapV3', 'protocols.uniswapV4', 'token.USDC']);
    // The beneficiary defaults to the first executor; the executors are the keys given.
    expect(results.filter((r) => r.id === 'executor.balance').map((r) => r.status)).toEqual(base.executorKeys.map(() => 'ok'));
    expect(results.find((r) => r.id === 'executor.balance')!.detail).toContain(privateKeyToAddress(base.executorKeys[0]!));
  });

  it('with --skip-doctor it starts anyway and serves the chain', async () => {
    const port = await freePort();
    const run = runCli(['serve', ...flags, '--data-dir', tempDir(), '--port', String(port), '--skip-doctor', '--quiet'], env);
    try {
      await until('the service answers /health', async () => ((await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.ok ? true : undefined));
      const health = (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as unknown;
      expect(JSON.stringify(health)).toContain('base');
    } finally {
      run.child.kill('SIGTERM');
    }
    const done = await run;
    expect(done.stdout).toMatch(/doctor: failed checks ignored \(--skip-doctor\)/);
    expect(done.stdout).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+, serving base \(chain 84532\)/);
    expect(done.code).toBe(0);
  });
});
