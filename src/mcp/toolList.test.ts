/**
 * What `tools/list` costs a model, read through the MCP SDK's own Client: the whole spec surface must stay within
 * 40 KB of compact JSON (issue 18 §1). A family is two tools whatever its number of endpoints (docs/mcp.md), so the
 * bound is the core tools' budget plus one budget per spec slug, the family not built yet included: its budget is
 * what the others leave of the 40 KB.
 */
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { SPEC_PROTOCOLS } from '../protocols/index.ts';
import { createServerFactory } from './server.ts';
import { CORE_TOOLS } from './tools/index.ts';

const BOUND_BYTES = 40_000;
/** The core tools together. */
const CORE_BUDGET = 13_100;
/**
 * Each family's tools together (`<slug>_read` and `<slug>_act`), a little over what they measure: pool-a-v3 has
 * twelve endpoints and two kinds of action (swaps, liquidity), the lending families six to nine. perp-v2 (eighteen
 * endpoints) gets what is left, and describes its fields as tersely (its bounds without a description).
 */
const BUILT_BUDGETS: Readonly<Record<string, number>> = {
  'lend-a-v3': 3_350,
  'lend-b-v3': 4_020,
  'lend-c': 3_960,
  'pool-a-v3': 6_510,
  'pool-b-v4': 4_150,
};
const budgetOf = (slug: string) => BUILT_BUDGETS[slug] ?? BOUND_BYTES - CORE_BUDGET - Object.values(BUILT_BUDGETS).reduce((a, b) => a + b, 0);

async function listTools() {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createServerFactory({ client: {} as never, journal: {} as never })();
  await server.connect(serverSide);
  const client = new Client({ name: 'tool-list-size', version: '1.0.0' });
  await client.connect(clientSide);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe('tools/list size', () => {
  it('fits 40 KB for the whole spec surface: core tools and one budget per family, today’s families each within theirs', async () => {
    const tools = await listTools();
    const total = size({ tools });
    const largest = tools.reduce((a, b) => (size(b) > size(a) ? b : a));
    const core = tools.filter((t) => CORE_TOOLS.some((c) => c.name === t.name));
    const families = SPEC_PROTOCOLS.map((p) => {
      const prefix = `${p.slug.replace(/[^A-Za-z0-9]+/g, '_')}_`;
      return { slug: p.slug, tools: tools.filter((t) => t.name.startsWith(prefix)) };
    });
    console.log(
      `tools/list: ${tools.length} tools, ${total} bytes of compact JSON; largest ${largest.name} (${size(largest)} bytes); ` +
        `core ${size(core)} bytes; ${families.map((f) => `${f.slug} ${f.tools.length ? size(f.tools) : 'not built'}`).join(', ')}`,
    );

    expect(CORE_BUDGET + SPEC_PROTOCOLS.reduce((n, p) => n + budgetOf(p.slug), 0)).toBeLessThanOrEqual(BOUND_BYTES);
    expect(budgetOf('perp-v2')).toBeGreaterThanOrEqual(4_700);
    expect(core.length).toBe(CORE_TOOLS.length);
    expect(size(core)).toBeLessThanOrEqual(CORE_BUDGET);
    // Every tool is the core's or a spec family's: nothing outside the budgets.
    expect(core.length + families.reduce((n, f) => n + f.tools.length, 0)).toBe(tools.length);
    for (const f of families) expect(size(f.tools), f.slug).toBeLessThanOrEqual(budgetOf(f.slug));
    expect(total).toBeLessThanOrEqual(BOUND_BYTES);
  });

  it('publishes numbers as short patterns and chains as enums', async () => {
    const tools = await listTools();
    const json = JSON.stringify(tools);
    // The longest pattern anywhere: the API's uint256 range pattern is 5 KB, its chain pattern spells every letter case.
    const patterns = [...json.matchAll(/"pattern":"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
    expect(Math.max(...patterns.map((p) => p.length))).toBeLessThan(120);
    expect(json).not.toContain('[eE][tT][hH]');
    const execute = tools.find((t) => t.name === 'execute')!;
    expect((execute.inputSchema.properties as Record<string, { enum?: string[] }>).chain!.enum).toEqual(['ethereum', 'base', 'arbitrum']);
  });
});
