/**
 * `agent-wallet policy …`, the operator's way to write AgentPolicies: on a data directory no service owns, and
 * through the admin socket of a running service, whose next request the policy then governs.
 */
import { hostname, userInfo } from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { counterAbi } from '../../src/devnet/contracts.ts';
import { killHard, spawnServiceChild } from '../support/child.ts';
import { newServiceSecret, tempDir, testDevnet } from '../support/env.ts';
import { apiClient } from '../support/http.ts';
import { cli, cliFails, CLI_TEST_TIMEOUT_MS } from '../support/cliCommands.ts';


const newKey = async (dir: string) => {
  const { api_key } = JSON.parse(await cli('keys', 'create', '--mode', 'sponsored', '--json', '--data-dir', dir)) as { api_key: string };
  return { apiKey: api_key, id: api_key.split('_')[1]! };
};

describe('agent-wallet policy', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('applies a YAML file, lists, gets, suspends, resumes and deletes on a data dir no service owns; refuses an invalid file', async () => {
    const dir = tempDir('aw-policy-');
    const { id } = await newKey(dir);
    const file = join(dir, 'bot-1.yaml');
    // Unquoted: the address keeps its checksum case and the amount its digits (read as text, not as numbers).
    writeFileSync(
      file,
      `name: bot-1-usdc
spec:
  apiClient: ${id}
  agents: { match: exact, agentId: bot-1 }
  rules:
    - name: usdc-transfer
      action: accept
      targets: [0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913]
      function:
        signature: transfer(address to, uint256 amount)
        args: [{ field: amount, lte: 123456789012345678901234567890 }]
`,
    );
    expect(await cli('policy', 'apply', '-f', file, '--data-dir', dir)).toBe(`created policy bot-1-usdc (key ${id}, agent id "bot-1", 1 rule)\n`);
    const got = JSON.parse(await cli('policy', 'get', 'bot-1-usdc', '--data-dir', dir));
    expect(got).toEqual({
      name: 'bot-1-usdc',
      spec: {
        apiClient: id,
        agents: { match: 'exact', agentId: 'bot-1' },
        suspended: false,
        rules: [
          {
            name: 'usdc-transfer',
            action: 'accept',
            targets: ['0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'],
            function: { signature: 'transfer(address to, uint256 amount)', args: [{ field: 'amount', lte: '123456789012345678901234567890' }] },
          },
        ],
      },
    });
    // What get prints applies again as it is (an update).
    const json = join(dir, 'bot-1.json');
    writeFileSync(json, JSON.stringify({ ...got, spec: { ...got.spec, validUntil: '2031-01-01T00:00:00Z' } }));
    expect(JSON.parse(await cli('policy', 'apply', '-f', json, '--json', '--data-dir', dir))).toMatchObject({ created: false, policy: { generation: 2 } });

    const { id: other } = await newKey(dir);
    writeFileSync(json, JSON.stringify({ name: 'other-key', spec: { apiClient: other, rules: [{ name: 'base', action: 'accept', chains: ['base'] }] } }));
    await cli('policy', 'apply', '-f', json, '--data-dir', dir);
    expect(JSON.parse(await cli('policy', 'list', '--json', '--data-dir', dir)).map((p: { name: string }) => p.name)).toEqual(['bot-1-usdc', 'other-key']);
    const mine = await cli('policy', 'list', '--client', id, '--data-dir', dir);
    expect(mine).toMatch(new RegExp(`^bot-1-usdc  ${id}  active +1 rule +agent id "bot-1"  valid … to 2031-01-01T00:00:00Z\\n$`));

    expect(await cli('policy', 'suspend', 'bot-1-usdc', '--data-dir', dir)).toMatch(/^suspended policy bot-1-usdc .*until `policy resume bot-1-usdc`/);
    expect(await cli('policy', 'list', '--client', id, '--data-dir', dir)).toContain('SUSPENDED');
    expect(JSON.parse(await cli('policy', 'get', 'bot-1-usdc', '--data-dir', dir)).spec.suspended).toBe(true);
    expect(JSON.parse(await cli('policy', 'resume', 'bot-1-usdc', '--json', '--data-dir', dir))).toMatchObject({ suspended: false });

    // Refused whole, naming the rule, exit 2; nothing written.
    writeFileSync(json, JSON.stringify({ name: 'broken', spec: { apiClient: id, rules: [{ name: 'bad-sig', action: 'accept', function: { signature: 'transfer(address' } }] } }));
    const invalid = await cliFails('policy', 'apply', '-f', json, '--data-dir', dir);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/^agent-wallet: rule "bad-sig": "transfer\(address" is not a function signature/);
    expect(invalid.stderr.split('\n')).toHaveLength(2); // one line, no stack trace
    writeFileSync(json, 'name: [unclosed');
    expect((await cliFails('policy', 'apply', '-f', json, '--data-dir', dir)).code).toBe(2);
    writeFileSync(json, JSON.stringify({ name: 'orphan', spec: { apiClient: 'nosuchkey0000000' } }));
    const orphan = await cliFails('policy', 'apply', '-f', json, '--data-dir', dir);
    expect([orphan.code, orphan.stderr]).toEqual([3, 'agent-wallet: spec.apiClient: no API key with id "nosuchkey0000000" in namespace default\n']);
    expect((await cliFails('policy', 'apply', '-f', join(dir, 'missing.yaml'), '--data-dir', dir)).stderr).toMatch(/cannot read .*missing\.yaml: ENOENT/);

    expect(await cli('policy', 'delete', 'other-key', '--data-dir', dir)).toBe('deleted policy other-key\n');
    const gone = await cliFails('policy', 'get', 'other-key', '--data-dir', dir);
    expect([gone.code, gone.stderr]).toEqual([3, 'agent-wallet: no policy named "other-key"\n']);
    expect((await cliFails('policy', 'frobnicate', '--data-dir', dir)).stderr).toMatch(/usage: policy apply/);
  });

  it('through the running service’s admin socket: the policy governs the key’s next request, suspend stops it, delete lifts it', async () => {
    const dir = tempDir('aw-policy-live-');
    const { url, child } = await spawnServiceChild(dir, newServiceSecret());
    try {
      const { apiKey, id } = await newKey(dir);
      const api = apiClient(url, apiKey);
      const counter = testDevnet().chain('base').testContracts.counter;
      const execute = (calldata: `0x${string}`) => api.post('/execute', { agent_id: 'bot-1', chain: 'base', target_contract: counter, calldata, value: '0' });
      const increment = encodeFunctionData({ abi: counterAbi, functionName: 'increment' });
      const file = join(dir, 'counter.json');
      writeFileSync(
        file,
        JSON.stringify({ name: 'counter-increment', spec: { apiClient: id, rules: [{ name: 'increment-only', action: 'accept', targets: [counter], function: { signature: 'increment()' } }] } }),
      );
      expect(await cli('policy', 'apply', '-f', file, '--data-dir', dir)).toMatch(/^created policy counter-increment/);
      expect(JSON.parse(await cli('policy', 'list', '--json', '--data-dir', dir))).toEqual([expect.objectContaining({ name: 'counter-increment', api_client: id })]);

      const ok = await execute(increment);
      expect(ok.status).toBe(200);
      // A call no rule accepts (one that would succeed: the policy, not the chain, refuses it).
      const denied = await execute(encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [2n] }));
      expect([denied.status, denied.body.error, denied.body.policy]).toEqual([403, 'policy_denied', 'counter-increment']);

      expect(await cli('policy', 'suspend', 'counter-increment', '--data-dir', dir)).toMatch(/^suspended policy counter-increment/);
      const suspended = await execute(increment);
      expect([suspended.status, suspended.body.error]).toEqual([403, 'agent_suspended']);

      // The socket refuses an invalid policy as the store does: exit 2, the rule named.
      writeFileSync(file, JSON.stringify({ name: 'counter-increment', spec: { apiClient: id, rules: [{ name: 'no-such-arg', action: 'accept', function: { signature: 'increment()', args: [{ field: 'by', eq: '1' }] } }] } }));
      const invalid = await cliFails('policy', 'apply', '-f', file, '--data-dir', dir);
      expect([invalid.code, invalid.stderr]).toEqual([2, 'agent-wallet: rule "no-such-arg": increment has no argument "by"\n']);

      expect(await cli('policy', 'delete', 'counter-increment', '--data-dir', dir)).toBe('deleted policy counter-increment\n');
      expect((await cliFails('policy', 'resume', 'counter-increment', '--data-dir', dir)).code).toBe(3);
      // No policy of the key any more: what it refused is accepted.
      expect((await execute(encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [2n] }))).status).toBe(200);

      // The audit log of the data directory: every change, by whom, from what to what; nothing for the refused file.
      const audit = readFileSync(join(dir, 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const policyChanges = audit.filter((r) => r.kind === 'AgentPolicy').map((r) => [r.verb, r.to?.spec.suspended ?? null, r.from?.spec.suspended ?? null]);
      expect(policyChanges).toEqual([
        ['create', false, null],
        ['update', true, false],
        ['delete', null, true],
      ]);
      expect(audit.every((r) => r.actor === `${userInfo().username}@${hostname()} (admin socket)`)).toBe(true);
      const keyCreated = audit.find((r) => r.kind === 'ApiClient' && r.verb === 'create');
      expect(keyCreated?.name).toBe(id);
      // A key's stored hash is shortened in the log.
      expect(keyCreated?.to.spec.keyHash).toMatch(/^[0-9a-f]{8}…$/);
    } finally {
      await killHard(child);
    }
  });
});
