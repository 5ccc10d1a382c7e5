import { describe, expect, it } from 'vitest';
import { helpText, mergeOptions } from './command.ts';
import { CLIENT_COMMANDS } from './commands/index.ts';
import { PROTOCOL_COMMANDS } from './commands/protocols.ts';

describe('the agents’ commands', () => {
  it.each([...CLIENT_COMMANDS, ...PROTOCOL_COMMANDS].map((c) => [c.name, c] as const))('%s has --help with its usage, every option and an example', (name, c) => {
    const help = helpText(c);
    expect(help).toContain(`usage: agent-wallet ${name}`);
    expect(() => mergeOptions(c.options)).not.toThrow();
    for (const option of Object.keys(c.options)) expect(help).toContain(`--${option}`);
    expect(help).toMatch(/example/);
    expect(c.examples.every((e) => e.startsWith('agent-wallet ') || /^[A-Z_]+=\S+ agent-wallet /.test(e) || e.includes('| agent-wallet '))).toBe(true);
  });
});
