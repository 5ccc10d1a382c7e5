import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { numberToHex, parseEther, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAddress } from 'viem/accounts';
import { chainUnderTest, freshSecret, incrementCall, outcomeRecorder, uniqueId } from '../../test/support/chainUnderTest.ts';
import { createChainWorker, type LocalChainWorker } from '../chain/worker/index.ts';
import { runPaymasterCommand } from '../cli/paymaster.ts';
import { readPaymaster } from './operations.ts';

/**
 * `agent-wallet paymaster` against the run's devnet, with fresh keys and a paymaster of its own (the devnet's stays
 * untouched): deploy, fund, stake, status; and a rotation with operations signed for the old paymaster included
 * after the switch. Real time only (the devnet is shared): a 1 s unstake delay and a 6 s sponsorship TTL.
 */
describe('agent-wallet paymaster (devnet)', () => {
  const env = chainUnderTest('base', { sponsorshipTtlSeconds: 6 });
  const rpcUrl = env.config.rpcUrl;
  const ownerKey = generatePrivateKey();
  const owner = privateKeyToAddress(ownerKey);
  const oldSignerKey = generatePrivateKey();
  const newSignerKey = generatePrivateKey();
  const dir = mkdtempSync(join(tmpdir(), 'aw-pm-'));
  const workers: LocalChainWorker[] = [];

  /** Runs the command in process, as bin/agent-wallet.js would with these variables; --json output parsed. */
  async function cli(args: string[], signerKey: Hex = oldSignerKey) {
    let text = '';
    const code = await runPaymasterCommand(
      [...args, '--chain', 'base', '--rpc-url', rpcUrl, '--json'],
      { AGENT_WALLET_PAYMASTER_OWNER_KEY: ownerKey, AGENT_WALLET_PAYMASTER_SIGNER_KEY: signerKey },
      (t) => (text += t),
    );
    return { code, out: JSON.parse(text) as Record<string, any> };
  }

  beforeAll(async () => {
    await env.client.request({ method: 'anvil_setBalance' as never, params: [owner, numberToHex(parseEther('100'))] as never });
  });
  afterAll(async () => {
    for (const w of workers) await w.close();
  });

  let oldPaymaster: Address;

  it('deploys a paymaster for the signer, funds and stakes it; status shows it', async () => {
    const deployed = await cli(['deploy']);
    expect(deployed.code).toBe(0);
    oldPaymaster = deployed.out.address;
    expect(deployed.out).toMatchObject({ code: true, owner, verifyingSigner: privateKeyToAddress(oldSignerKey), deposit: '0', staked: false });

    expect((await cli(['fund', '--paymaster', oldPaymaster, '--amount', '1'])).out).toMatchObject({ deposit: parseEther('1').toString() });
    const staked = await cli(['stake', '--paymaster', oldPaymaster, '--amount', '0.1', '--unstake-delay', '1']);
    expect(staked.out).toMatchObject({ staked: true, stake: parseEther('0.1').toString(), unstakeDelaySec: 1, withdrawTime: 0 });

    const status = await cli(['status', '--paymaster', oldPaymaster]);
    expect(status.code).toBe(0);
    expect(status.out).toMatchObject({ chain: 'base', address: oldPaymaster, owner, deposit: parseEther('1').toString(), staked: true });
    // Nothing there: status says so with exit 3.
    expect((await cli(['status', '--paymaster', privateKeyToAddress(generatePrivateKey())])).code).toBe(3);
  });

  it('rotates: the old paymaster’s operation is included after the switch, a new one for the new; finish refused, then done', { timeout: 120_000 }, async () => {
    // The service before the switch: signs for the old paymaster. Its operation waits (a queue, a slow agent).
    const before = await createChainWorker({ ...env.config, paymaster: oldPaymaster, paymasterSignerKey: oldSignerKey }, { serviceSecret: freshSecret() });
    workers.push(before);
    const pending = await before.prepareOperation({ apiClient: 'acme', agentId: uniqueId('pm-old') }, [incrementCall(env.counter)], { requestId: uniqueId('r') });
    expect(pending.paymaster!.toLowerCase()).toBe(oldPaymaster.toLowerCase());

    const statePath = join(dir, 'rotation.json');
    const start = ['rotate', 'start', '--paymaster', oldPaymaster, '--deposit', '0.5', '--unstake-delay', '1', '--sponsorship-ttl', '6', '--state', statePath];
    const started = await cli(start, newSignerKey);
    expect(started.code).toBe(0);
    expect(started.out.steps.map((s: { step: string; result: string }) => `${s.step}:${s.result}`)).toEqual(['deploy:did', 'fund:did', 'stake:did', 'unlock:did', 'switch:wait']);
    const newPaymaster: Address = started.out.switch.paymaster;
    expect(await readPaymaster(env.client, env.config.entryPoint, newPaymaster)).toMatchObject({
      verifyingSigner: privateKeyToAddress(newSignerKey), owner, deposit: parseEther('0.5'), staked: true, stake: parseEther('0.1'), unstakeDelaySec: 1,
    });
    const oldNow = await readPaymaster(env.client, env.config.entryPoint, oldPaymaster);
    expect(oldNow).toMatchObject({ deposit: parseEther('1'), staked: false, stake: parseEther('0.1') });
    expect(oldNow.withdrawTime).toBeGreaterThan(0);
    // Again: every step is already done, nothing is sent.
    const again = await cli(start, newSignerKey);
    expect(again.out.steps.map((s: { result: string }) => s.result)).toEqual(['already', 'already', 'already', 'already', 'wait']);

    // Refused before the switch is recorded.
    expect((await cli(['rotate', 'finish', '--state', statePath], newSignerKey)).out).toMatchObject({ error: 'not_started' });

    // The service after the switch: the new paymaster and signer; the operator records it.
    const after = await createChainWorker({ ...env.config, paymaster: newPaymaster, paymasterSignerKey: newSignerKey }, { serviceSecret: freshSecret() });
    workers.push(after);
    const switched = await cli(['rotate', 'switched', '--state', statePath], newSignerKey);
    expect(switched.code).toBe(0);
    expect(switched.out.finishFrom).toBe(switched.out.state.switchedAt + 7);
    // Refused while operations signed for the old one may still be valid.
    const early = await cli(['rotate', 'finish', '--state', statePath], newSignerKey);
    expect(early.code).toBe(3);
    expect(early.out).toMatchObject({ error: 'not_yet', notBefore: switched.out.finishFrom });

    // It includes the operation signed for the old one, and sponsors new ones with the new.
    const outcomes = outcomeRecorder(after);
    await after.submitOperation(pending);
    expect(await outcomes.wait(pending.hash)).toMatchObject({ state: 'included', success: true });
    const fresh = await after.prepareOperation({ apiClient: 'acme', agentId: uniqueId('pm-new') }, [incrementCall(env.counter)], { requestId: uniqueId('r') });
    expect(fresh.paymaster!.toLowerCase()).toBe(newPaymaster.toLowerCase());
    await after.submitOperation(fresh);
    expect(await outcomes.wait(fresh.hash)).toMatchObject({ state: 'included', success: true });
    const oldDeposit = (await readPaymaster(env.client, env.config.entryPoint, oldPaymaster)).deposit;
    expect(oldDeposit).toBeLessThan(parseEther('1')); // the old one paid for its operation
    const newDeposit = (await readPaymaster(env.client, env.config.entryPoint, newPaymaster)).deposit;

    // Real time: past the overlap (switch + TTL) and the unstake delay.
    const waitMs = switched.out.finishFrom * 1000 - Date.now() + 1100;
    if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
    const finished = await cli(['rotate', 'finish', '--state', statePath], newSignerKey);
    expect(finished.code).toBe(0);
    expect(finished.out.steps.map((s: { step: string; result: string }) => `${s.step}:${s.result}`)).toEqual(['withdrawStake:did', 'withdrawDeposit:did', 'depositNew:did']);
    expect(await readPaymaster(env.client, env.config.entryPoint, oldPaymaster)).toMatchObject({ deposit: 0n, stake: 0n, staked: false });
    expect((await readPaymaster(env.client, env.config.entryPoint, newPaymaster)).deposit).toBe(newDeposit + oldDeposit);
    // Once finished, finish again sends nothing; status reads the state file.
    expect((await cli(['rotate', 'finish', '--state', statePath], newSignerKey)).out.steps).toMatchObject([{ step: 'finish', result: 'already' }]);
    expect((await cli(['status', '--paymaster', newPaymaster, '--state', statePath])).out.rotation).toMatchObject({ phase: 'finished', old: oldPaymaster, new: newPaymaster });
  });

  it('resumes a start that stopped (the owner ran out of funds) and finishes without a stake, the deposit to an address', { timeout: 60_000 }, async () => {
    const key = generatePrivateKey();
    const who = privateKeyToAddress(key);
    const setBalance = (eth: string) => env.client.request({ method: 'anvil_setBalance' as never, params: [who, numberToHex(parseEther(eth))] as never });
    await setBalance('0.5');
    const as = async (args: string[], signerKey: Hex) => {
      let text = '';
      const code = await runPaymasterCommand([...args, '--chain', 'base', '--rpc-url', rpcUrl, '--json'], { AGENT_WALLET_PAYMASTER_OWNER_KEY: key, AGENT_WALLET_PAYMASTER_SIGNER_KEY: signerKey }, (t) => (text += t));
      return { code, out: JSON.parse(text) as Record<string, any> };
    };
    const old: Address = (await as(['deploy'], oldSignerKey)).out.address;
    expect((await as(['fund', '--paymaster', old, '--amount', '0.2'], oldSignerKey)).code).toBe(0);

    const statePath = join(dir, 'resumed.json');
    const start = ['rotate', 'start', '--paymaster', old, '--deposit', '1', '--sponsorship-ttl', '2', '--state', statePath];
    const stopped = await as(start, newSignerKey);
    expect(stopped).toMatchObject({ code: 1, out: { error: 'transaction_failed' } });
    await setBalance('5');
    const resumed = await as(start, newSignerKey);
    expect(resumed.code).toBe(0);
    expect(resumed.out.steps.map((s: { step: string; result: string }) => `${s.step}:${s.result}`)).toEqual(['deploy:already', 'fund:did', 'stake:already', 'unlock:already', 'switch:wait']);

    const to = privateKeyToAddress(generatePrivateKey());
    const switched = await as(['rotate', 'switched', '--state', statePath], newSignerKey);
    expect(switched.out.steps).toMatchObject([{ step: 'switched', result: 'did' }]);
    expect((await as(['rotate', 'switched', '--state', statePath], newSignerKey)).out.steps).toMatchObject([{ step: 'switched', result: 'already' }]);
    const waitMs = switched.out.finishFrom * 1000 - Date.now() + 1100;
    if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
    const finished = await as(['rotate', 'finish', '--to', to, '--state', statePath], newSignerKey);
    expect(finished.out.steps.map((s: { step: string; result: string }) => `${s.step}:${s.result}`)).toEqual(['withdrawStake:already', 'withdrawDeposit:did']);
    expect(await env.client.getBalance({ address: to })).toBe(parseEther('0.2'));
    expect((await readPaymaster(env.client, env.config.entryPoint, old)).deposit).toBe(0n);
  });
});
