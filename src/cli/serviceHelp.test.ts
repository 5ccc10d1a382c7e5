import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DEV_OPTIONS } from '../roles/devOptions.ts';

const run = promisify(execFile);

describe('agent-wallet dev --help (npm start -- --help)', () => {
  it("prints the dev command's own usage and every option it takes, and no other command's", { timeout: 60_000 }, async () => {
    const { stdout } = await run(process.execPath, ['bin/agent-wallet.js', 'dev', '--help']);
    expect(stdout.startsWith('usage: agent-wallet dev [options]\n')).toBe(true);
    for (const option of Object.keys(DEV_OPTIONS)) expect(stdout).toContain(`--${option}`);
    expect(stdout).not.toMatch(/faucet-server|keys create|chain-worker/);
  });

  it('the README names every option of npm start', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    for (const option of Object.keys(DEV_OPTIONS)) expect(readme).toContain(`\`--${option}\``);
  });
});
