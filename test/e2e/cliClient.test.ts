/**
 * The agents' CLI (`agent-wallet wallet|balance|simulate|execute|status|pay|feed|faucet`) driven as a subprocess
 * against the service on the devnet: every command, --json, exit codes, a missing and a bad key, `status
 * --watch` read from a real terminal (tmux), and `status --last` after the CLI was killed mid-execute.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeFunctionResult, encodeFunctionData, erc20Abi, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { startFaucet, type RunningFaucet } from '../../src/faucet/index.ts';
import { devnetFaucetSettings } from '../support/faucetUnderTest.ts';
import { lossyProxy, runCli } from '../support/cli.ts';
import { tempDir, testDevnet } from '../support/env.ts';
import { newPayer } from '../support/payer.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { until } from '../support/until.ts';

/** Each CLI call is a Node process loading the TypeScript sources: seconds on a loaded machine. */
const TIMEOUT = 240_000;
const CHAIN = 'base';

let svc: TestService;
let sponsored: string;
let manual: string;
let journal: string;
let counter: Address;
beforeAll(async () => {
  // x402 settles from the devnet's settler account, as `npm start` does.
  svc = await startTestService({ payments: { x402SettlerKey: testDevnet().manifest.accounts.settler!.privateKey } });
  sponsored = (await svc.newKey('sponsored')).apiKey;
  manual = (await svc.newKey('manual')).apiKey;
  journal = join(tempDir('aw-cli-'), 'journal.jsonl');
  counter = svc.devnet.chain(CHAIN).testContracts.counter;
});
afterAll(async () => {
  await svc?.stop();
});

const env = (apiKey: string | undefined, extra: Record<string, string> = {}) => ({
  AGENT_WALLET_API_KEY: apiKey,
  AGENT_WALLET_BASE_URL: svc.url,
  AGENT_WALLET_JOURNAL: journal,
  ...extra,
});
/** `apiKey` null: no key at all. */
const cli = (args: string[], apiKey: string | null = sponsored, extra: Record<string, string> = {}, input?: string) => runCli(args, env(apiKey ?? undefined, extra), input);
const json = <T = Record<string, any>>(stdout: string): T => JSON.parse(stdout) as T;
const counterNumber = async () =>
  svc.devnet.publicClient(CHAIN).readContract({ address: counter, abi: counterAbi, functionName: 'number' });

describe('agent-wallet: the agents’ commands', { timeout: TIMEOUT }, () => {
  it('wallet, balance and feed answer in text and in --json, the same as the API', async () => {
    const [text, asJson, balance, feed] = await Promise.all([
      cli(['wallet', '--agent-id', 'cli-read', '--chain', CHAIN]),
      cli(['wallet', '--agent-id', 'cli-read', '--chain', CHAIN, '--json']),
      cli(['balance', '--agent-id', 'cli-read', '--chain', CHAIN, '--json']),
      cli(['feed', '--limit', '3', '--json']),
    ]);
    const wallet = json(asJson.stdout);
    expect(asJson.code).toBe(0);
    expect(wallet).toMatchObject({ agent_id: 'cli-read', chain: CHAIN, deployed: false });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`smart_wallet_address\\s+${wallet.smart_wallet_address}`));
    expect(text.stdout).not.toContain('\x1b['); // no colour when stdout is not a terminal
    expect(json(balance.stdout)).toMatchObject({ smart_wallet_address: wallet.smart_wallet_address, native: { wei: '0' } });
    expect(json(balance.stdout).tokens.map((t: { symbol: string }) => t.symbol)).toEqual(['USDC', 'USDT', 'aUSD', 'WETH']);
    expect(feed.code).toBe(0);
    expect(json(feed.stdout).executions.length).toBeLessThanOrEqual(3);
  });

  it('a missing key and a bad key get the API’s own 401, shown plainly (exit 3); a bad --limit the API’s 400', async () => {
    const [missing, bad, badJson, badLimit] = await Promise.all([
      cli(['wallet', '--agent-id', 'a'], null),
      cli(['wallet', '--agent-id', 'a'], 'aw_0000000000000000_not-a-real-secret-not-a-real-secret-not-a-rea'),
      cli(['wallet', '--agent-id', 'a', '--json'], 'nonsense'),
      cli(['feed', '--limit', 'many']),
    ]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('missing X-API-Key header');
    expect(missing.stderr).toContain('HTTP 401');
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('invalid API key');
    expect(badJson.code).toBe(3);
    expect(json(badJson.stdout)).toMatchObject({ error: 'invalid API key', http_status: 401 });
    expect(badLimit.code).toBe(3);
    expect(badLimit.stderr).toContain('invalid_limit');
  });

  it('simulate and execute encode calldata from --abi and arguments; execute --wait follows it to confirmed', async () => {
    const sig = 'function setNumber(uint256 newNumber)';
    const sim = await cli(['simulate', '--agent-id', 'cli-abi', '--chain', CHAIN, '--to', counter, '--abi', sig, '--function', 'setNumber', '4242', '--json']);
    expect(sim.code, sim.stderr).toBe(0);
    expect(json(sim.stdout)).toMatchObject({ status: 'pending', tx_hash: null });

    const run = await cli(['execute', '--agent-id', 'cli-abi', '--chain', CHAIN, '--to', counter, '--abi', sig, '--function', 'setNumber', '4242', '--wait']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/request_id\s+req-idem-[0-9a-f]{40}/);
    expect(run.stdout).toMatch(/status\s+confirmed/);
    expect(await counterNumber()).toBe(4242n);
  });

  it('execute --wait --json: the execute answer first (replayed: true on a replay), then each status to confirmed', async () => {
    const args = ['execute', '--agent-id', 'cli-wait', '--chain', CHAIN, '--to', counter, '--data', '0xd09de08a', '--idempotency-key', 'cli-wait-1', '--wait', '--json'];
    const before = await counterNumber();
    const run = await cli(args);
    expect(run.code, run.stderr).toBe(0);
    const [answer, ...states] = run.stdout.trim().split('\n').map((l) => json(l));
    expect(answer).toMatchObject({ request_id: expect.stringMatching(/^req-idem-/), status: 'queued', smart_wallet_address: expect.any(String) });
    expect(answer).not.toHaveProperty('replayed');
    expect(states.length).toBeGreaterThan(0);
    for (const s of states) expect(s).toMatchObject({ request_id: answer!.request_id });
    // One record per state seen, in order, ending with the confirmation and its transaction.
    expect(new Set(states.map((s) => s.status)).size).toBe(states.length);
    expect(states.at(-1)).toMatchObject({ status: 'confirmed', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await counterNumber()).toBe(before + 1n);

    const again = await cli(args);
    expect(again.code, again.stderr).toBe(0);
    const [replay, ...now] = again.stdout.trim().split('\n').map((l) => json(l));
    expect(replay).toEqual({ ...answer, tx_hash: replay!.tx_hash, message: replay!.message, replayed: true });
    expect(now).toEqual([states.at(-1)]); // already confirmed: the record once
    expect(await counterNumber()).toBe(before + 1n); // not sent again
  });

  it('executes a batch read from stdin, and --json prints the result', async () => {
    const incrementBy = (n: bigint) => encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [n] });
    const before = await counterNumber();
    const batch = JSON.stringify([
      { target_contract: counter, calldata: incrementBy(1n), value: '0' },
      { target_contract: counter, calldata: incrementBy(2n), value: '0' },
    ]);
    const run = await cli(['execute', '--agent-id', 'cli-batch', '--chain', CHAIN, '--file', '-', '--json'], sponsored, {}, batch);
    expect(run.code, run.stderr).toBe(0);
    const { request_id } = json(run.stdout);
    const done = await svc.newKey('sponsored'); // (another key cannot see it)
    expect((await done.api.get(`/status/${request_id}`)).status).toBe(404);
    const watched = await cli(['status', request_id, '--watch', '--json']);
    expect(watched.code).toBe(0);
    const states = watched.stdout.trim().split('\n').map((l) => json(l));
    expect(states.at(-1)).toMatchObject({ request_id, status: 'confirmed', calls: 2 });
    expect(await counterNumber()).toBe(before + 3n);
  });

  it('bad input is the API’s 400 naming the field (exit 3); a usage error is exit 2; a reverting call exit 3 with its reason', async () => {
    const [badTarget, usage, reverting] = await Promise.all([
      cli(['execute', '--agent-id', 'cli-bad', '--to', '0x1234', '--data', '0x']),
      cli(['execute', '--agent-id', 'cli-bad', '--data', '0x']),
      cli(['simulate', '--agent-id', 'cli-bad', '--chain', CHAIN, '--to', counter, '--abi', 'function fail()', '--function', 'fail', '--json']),
    ]);
    expect(badTarget.code).toBe(3);
    expect(badTarget.stderr).toMatch(/invalid_target_contract \(field target_contract\)/);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--to is required');
    expect(reverting.code).toBe(3);
    expect(json(reverting.stdout)).toMatchObject({ error: 'simulation_failed', http_status: 400 });
  });

  it('cancel ends a request waiting for its payment (exit 0), the same again; status shows its history; too late is exit 3', async () => {
    const first = await cli(['execute', '--agent-id', 'cli-cancel', '--chain', CHAIN, '--to', counter, '--data', '0xd09de08a', '--json'], manual);
    expect(first.code).toBe(4);
    const { request_id } = json(first.stdout);
    const cancelled = await cli(['cancel', request_id], manual);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toMatch(/status\s+failed/);
    expect(cancelled.stdout).toMatch(/failure\s+cancelled: cancelled by its caller/);
    expect(cancelled.stdout).toMatch(/history\s+pending → payment_required \+[0-9.]+ (ms|s) → failed \+/);
    const again = await cli(['cancel', request_id, '--json'], manual);
    expect(again.code).toBe(0);
    expect(json(again.stdout)).toMatchObject({ request_id, status: 'failed', failure: { code: 'cancelled' } });
    const status = await cli(['status', request_id], manual);
    expect(status.stdout).toMatch(/history\s+pending → payment_required/);

    const done = await cli(['execute', '--agent-id', 'cli-cancel', '--chain', CHAIN, '--to', counter, '--data', '0xd09de08a', '--wait', '--json']);
    const late = await cli(['cancel', json(done.stdout.trim().split('\n').at(-1)!).request_id, '--json']);
    expect(late.code).toBe(3);
    expect(json(late.stdout)).toMatchObject({ error: 'not_cancellable', reason: 'finished', status: 'confirmed', http_status: 409 });
  });

  it('status --watch in a real terminal: a live line through payment_required → … → confirmed, coloured, exit 0', async () => {
    const first = await cli(['execute', '--agent-id', 'cli-watch', '--chain', CHAIN, '--to', counter, '--data', '0xd09de08a', '--json'], manual);
    expect(first.code).toBe(4); // 402: pay first
    const quote = json(first.stdout);
    expect(quote).toMatchObject({ error: 'payment_required', chain: CHAIN });

    const dir = tempDir('aw-tmux-');
    const script = join(dir, 'watch.sh');
    const exports = Object.entries(env(manual))
      .map(([k, v]) => `export ${k}='${v}'`)
      .join('\n');
    writeFileSync(script, `${exports}\ncd '${process.cwd()}'\n'${process.execPath}' bin/agent-wallet.js status ${quote.request_id} --watch\necho "EXIT=$?"\nsleep 60\n`);
    const session = `aw-watch-${process.pid}`;
    execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '220', '-y', '12', `bash ${script}`]);
    const pane = (colour = false) => execFileSync('tmux', ['capture-pane', '-p', ...(colour ? ['-e'] : []), '-t', session], { encoding: 'utf8' });
    try {
      await until('the watch to show payment_required', async () => (pane().includes('payment_required') ? true : undefined), 60_000);
      expect(pane(true)).toContain('\x1b[33mpayment_required'); // yellow on a terminal

      const payer = await newPayer(svc.devnet, CHAIN);
      await payer.mint('USDC', payer.address, 10_000_000n);
      const paid = await cli(['pay', quote.request_id, '--method', 'x402'], manual, { AGENT_WALLET_PAYER_KEY: payer.privateKey });
      expect(paid.code, paid.stderr).toBe(0);

      await until('the watch to end', async () => (pane().includes('EXIT=') ? true : undefined), 90_000);
      const screen = pane();
      expect(screen).toMatch(/payment_required → (\S+ → )*confirmed/); // one line, rewritten through the states
      expect(screen).toMatch(/status\s+confirmed/);
      expect(screen).toContain('EXIT=0');
      expect(screen.split('\n').filter((l) => l.includes(`${quote.request_id}  `))).toHaveLength(1);
    } finally {
      execFileSync('tmux', ['kill-session', '-t', session]);
    }
  });

  it('status --last after the CLI was killed mid-execute: the request is looked up by its known id, not sent again', async () => {
    // The request reaches the service; its answer never comes back.
    const proxy = await lossyProxy(new URL(svc.url), ['lose-answer']);
    try {
      const agent = `cli-killed-${Date.now()}`;
      const run = cli(['execute', '--agent-id', agent, '--chain', CHAIN, '--to', counter, '--data', '0xd09de08a', '--base-url', proxy.url]);
      const mine = async () => (await svc.store.list('ExecutionRequest')).items.filter((r) => r.spec.agentId === agent);
      await until('the request to reach the service', async () => ((await mine()).length === 1 ? true : undefined), 60_000);
      run.child.kill('SIGKILL');
      await run;
      const lines = readFileSync(journal, 'utf8').trim().split('\n').map((l) => json(l));
      const sent = lines.findLast((l) => l.kind === 'sent');
      expect(sent).toMatchObject({ body: { agent_id: agent } });
      expect(lines.at(-1)).toBe(sent); // no answer was recorded

      const last = await cli(['status', '--last', '--base-url', proxy.url, '--json']);
      expect(last.code, last.stderr).toBe(0);
      const [request] = await mine();
      expect(json(last.stdout)).toMatchObject({ request_id: request!.metadata.name, agent_id: agent });
      expect(await mine()).toHaveLength(1); // looked up, never sent again
    } finally {
      await proxy.close();
    }
  });

  it('status --last when the request never arrived: 404, nothing executed, and it says so', async () => {
    const proxy = await lossyProxy(new URL(svc.url), ['lose-request']);
    try {
      const agent = `cli-lost-${Date.now()}`;
      const run = cli(['execute', '--agent-id', agent, '--chain', CHAIN, '--to', counter, '--data', '0xd09de08a', '--base-url', proxy.url]);
      await until('the journal line', async () => (existsSync(journal) && readFileSync(journal, 'utf8').includes(agent) ? true : undefined), 60_000);
      run.child.kill('SIGKILL');
      await run;
      const last = await cli(['status', '--last', '--base-url', proxy.url]);
      expect(last.code).toBe(3);
      expect(last.stderr).toContain('never reached the service');
      expect((await svc.store.list('ExecutionRequest')).items.filter((r) => r.spec.agentId === agent)).toHaveLength(0);
    } finally {
      await proxy.close();
    }
  });

  it('execute --pay by transfer: the payer sends the quoted amount to the treasury, the proof is accepted, the request confirms', async () => {
    const payer = await newPayer(svc.devnet, CHAIN);
    await payer.mint('aUSD', payer.address, 10_000_000n);
    const aUSD = svc.devnet.chain(CHAIN).tokens.find((t) => t.symbol === 'aUSD')!.address;
    const treasury = svc.devnet.chain(CHAIN).treasury;
    const balanceOf = async (who: Address) =>
      decodeFunctionResult({
        abi: erc20Abi,
        functionName: 'balanceOf',
        data: (await svc.devnet.publicClient(CHAIN).call({ to: aUSD, data: encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [who] }) })).data!,
      });
    const before = await balanceOf(treasury);
    const run = await cli(
      ['execute', '--agent-id', 'cli-transfer', '--chain', CHAIN, '--to', counter, '--data', '0xd09de08a', '--pay', '--method', 'transfer', '--pay-token', 'aUSD', '--wait', '--json'],
      manual,
      { AGENT_WALLET_PAYER_KEY: payer.privateKey, AGENT_WALLET_RPC_URL_BASE: svc.devnet.chain(CHAIN).rpcUrl },
    );
    expect(run.code, run.stderr).toBe(0);
    const states = run.stdout.trim().split('\n').map((l) => json(l));
    expect(states.at(-1)).toMatchObject({ status: 'confirmed' });
    const paid = BigInt((await svc.store.get('ExecutionRequest', states.at(-1)!.request_id)).status!.payment!.paid!.amountRaw);
    expect(await balanceOf(treasury)).toBe(before + paid);
  });

  it('pay without a payer key is a usage error that says where the key goes', async () => {
    const run = await cli(['pay', '--last'], manual);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('AGENT_WALLET_PAYER_KEY');
  });

  it('faucet sends aUSD to the agent’s wallet', async () => {
    let faucet: RunningFaucet | undefined;
    try {
      // The service's own chain workers send the drips, as under `npm start`.
      faucet = await startFaucet({ settings: devnetFaucetSettings(), workers: svc.workers, port: 0 });
      const run = await cli(['faucet', '--agent-id', 'cli-faucet', '--chain', CHAIN, '--faucet-url', faucet.url, '--json']);
      expect(run.code, run.stderr).toBe(0);
      const wallet = json((await cli(['wallet', '--agent-id', 'cli-faucet', '--chain', CHAIN, '--json'])).stdout);
      expect(json(run.stdout)).toMatchObject({ address: wallet.smart_wallet_address, token: 'aUSD', balance: '100' });
    } finally {
      await faucet?.stop();
    }
  });

  it('--help prints the usage and an example', async () => {
    const run = await cli(['status', '--help'], null);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('usage: agent-wallet status');
    expect(run.stdout).toMatch(/example/);
    for (const service of [['dev', '--help'], ['keys', 'list', '-h'], ['faucet-server', '--help']]) {
      const help = await cli(service, null);
      expect({ service, code: help.code }).toEqual({ service, code: 0 });
      expect(help.stdout).toContain(`usage: agent-wallet ${service[0]} [options]`); // its own section (serviceHelp)
    }
  });
});
