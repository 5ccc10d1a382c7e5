/**
 * What the journaling proxy adds to a JSON-RPC call: the same calls to one anvil, straight and through the
 * proxy (rpcProxy.ts) with its journal on disk, in the same run. `npx vitest bench --run src/devnet/rpcProxy.bench.ts`.
 * Figures only, no assertions on time. A read is one more loopback HTTP hop; a send is that, plus the journal's
 * append and fdatasync before it is forwarded and the answer's append before it is relayed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, bench, describe } from 'vitest';
import type { Hex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { ANVIL_MNEMONIC } from './accounts.ts';
import { startAnvil } from './anvil.ts';
import { openJournal } from './journal.ts';
import { nodeRpc } from './rpc.ts';
import { startRpcProxy } from './rpcProxy.ts';

const CHAIN_ID = 31337;
const dir = mkdtempSync(join(tmpdir(), 'agent-wallet-proxy-bench-'));
const anvil = await startAnvil({ chainId: CHAIN_ID, marker: join(dir, 'anvil') });
const rpc = nodeRpc(anvil.rpcUrl);
const opened = await openJournal(join(dir, 'bench.journal'));
if (!opened.ok) throw opened.error;
const journal = opened.value.journal;
const proxy = await startRpcProxy({ upstream: anvil.rpcUrl, journal, rpc });

afterAll(async () => {
  await proxy.close();
  await journal.close();
  rpc.close();
  await anvil.stop();
  rmSync(dir, { recursive: true, force: true });
});

// fetch, as viem's http transport sends (keep-alive).
async function call(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const reply = (await response.json()) as { result?: unknown; error?: { message: string } };
  if (reply.error) throw new Error(reply.error.message);
  return reply.result;
}

// Transfers signed ahead, so that signing is not measured; one sender per path keeps the nonces apart.
function transfers(index: number, n: number): Promise<Hex[]> {
  const account = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: index });
  return Promise.all(
    Array.from({ length: n }, (_, nonce) =>
      account.signTransaction({ chainId: CHAIN_ID, type: 'eip1559', to: account.address, value: 1n, nonce, gas: 21_000n, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n }),
    ),
  );
}
const SENDS = 3_000;
const directTxs = await transfers(1, SENDS);
const proxiedTxs = await transfers(2, SENDS);
let d = 0;
let p = 0;
const options = { time: 3_000, warmupTime: 300 };

describe('a read (eth_blockNumber)', () => {
  bench('anvil directly', () => call(anvil.rpcUrl, 'eth_blockNumber').then(() => undefined), options);
  bench('through the journaling proxy', () => call(proxy.url, 'eth_blockNumber').then(() => undefined), options);
});

describe('a read with a body (eth_call)', () => {
  const tx = { to: '0x0000000000000000000000000000000000000001', data: `0x${'ab'.repeat(256)}` };
  bench('anvil directly', () => call(anvil.rpcUrl, 'eth_call', [tx, 'latest']).then(() => undefined), options);
  bench('through the journaling proxy', () => call(proxy.url, 'eth_call', [tx, 'latest']).then(() => undefined), options);
});

describe('a transaction mined (eth_sendRawTransactionSync)', () => {
  bench('anvil directly', () => call(anvil.rpcUrl, 'eth_sendRawTransactionSync', [directTxs[d++]!]).then(() => undefined), { ...options, iterations: 10, time: 2_000 });
  bench('through the journaling proxy', () => call(proxy.url, 'eth_sendRawTransactionSync', [proxiedTxs[p++]!]).then(() => undefined), { ...options, iterations: 10, time: 2_000 });
});
