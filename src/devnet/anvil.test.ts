import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { findFreePort, startAnvil, type AnvilInstance } from './anvil.ts';

const dir = mkdtempSync(join(tmpdir(), 'agent-wallet-anvil-'));
const started: AnvilInstance[] = [];

afterAll(async () => {
  await Promise.all(started.map((node) => node.stop()));
  rmSync(dir, { recursive: true, force: true });
});

// CI once lost a run to this: between finding a free port and anvil binding it, another test's anvil took it and
// answered eth_chainId with its own chain id.
test('a port another node holds is given up for a fresh one, whichever way the clash shows', async () => {
  const other = await startAnvil({ chainId: 31337, marker: join(dir, 'other') });
  started.push(other);
  const offered: number[] = [];
  const node = await startAnvil({
    chainId: 84532,
    marker: join(dir, 'ours'),
    pickPort: async () => {
      const port = offered.length === 0 ? other.port : await findFreePort();
      offered.push(port);
      return port;
    },
  });
  started.push(node);
  expect(offered[0]).toBe(other.port);
  expect(node.port).not.toBe(other.port);
  expect(offered.length).toBe(2);
  // The other node is untouched: still up, still its own chain.
  const reply = await fetch(other.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
  });
  expect(((await reply.json()) as { result: string }).result).toBe('0x7a69');
});
