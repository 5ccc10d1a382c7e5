import { describe, expect, it } from 'vitest';
import { agentInScope, describeAgentScope, OperatorAgentScopeSchema } from './agentScope.ts';

describe('agent scope', () => {
  it('no scope: any agent id', () => {
    expect(agentInScope(undefined, 'anyone')).toBe(true);
    expect(describeAgentScope(undefined)).toBe('any agent id');
  });

  it('exact: that agent id only, case-sensitive, no prefix of it or longer id', () => {
    const scope = { match: 'exact', agentId: 'bot-1' } as const;
    expect(agentInScope(scope, 'bot-1')).toBe(true);
    for (const other of ['bot-10', 'bot-', 'Bot-1', 'bot-1 ', ' bot-1', '']) expect([other, agentInScope(scope, other)]).toEqual([other, false]);
    expect(describeAgentScope(scope)).toBe('agent id "bot-1"');
  });

  it('prefix: every agent id that starts with it, the prefix itself included; nothing else', () => {
    const scope = { match: 'prefix', agentId: 'team-a/' } as const;
    for (const ok of ['team-a/', 'team-a/scout', 'team-a/x/y']) expect([ok, agentInScope(scope, ok)]).toEqual([ok, true]);
    for (const no of ['team-a', 'team-b/scout', 'Team-a/scout', 'x/team-a/']) expect([no, agentInScope(scope, no)]).toEqual([no, false]);
    expect(describeAgentScope(scope)).toBe('agent ids starting "team-a/"');
  });

  it('an operator gives the scope as the API takes agent ids: no control characters, 1 to 256 code points', () => {
    const ok = (agentId: string) => OperatorAgentScopeSchema.safeParse({ match: 'prefix', agentId }).success;
    expect(ok('team-a/')).toBe(true);
    expect(ok('x'.repeat(256))).toBe(true);
    for (const bad of ['', 'x'.repeat(257), 'bad\u0001id', 'tab\there']) expect([bad, ok(bad)]).toEqual([bad, false]);
  });
});
