import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { keccak256, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ANVIL_MNEMONIC } from './accounts.ts';
import { startAnvil, type AnvilInstance } from './anvil.ts';
import { openJournal, type ChainJournal } from './journal.ts';
import { nodeRpc, type NodeRpc } from './rpc.ts';
import { startRpcProxy, type RpcProxy } from './rpcProxy.ts';
import { mnemonicToAccount } from 'viem/accounts';
import { until } from '../../test/support/until.ts';

const CHAIN_ID = 31337;
const dir = mkdtempSync(join(tmpdir(), 'agent-wallet-rpc-proxy-'));
const sender = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 1 });
let anvil: AnvilInstance;
let direct: NodeRpc;
let journal: ChainJournal;
let proxy: RpcProxy;
let nonce = 0;

async function post(url: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return response.json();
}

async function call<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const reply = (await post(url, { jsonrpc: '2.0', id: 1, method, params })) as { result?: T; error?: { message: string } };
  if (reply.error) throw new Error(`${method}: ${reply.error.message}`);
  return reply.result as T;
}

const signed = (to: Hex = sender.address): Promise<Hex> =>
  sender.signTransaction({ chainId: CHAIN_ID, type: 'eip1559', to, value: 1n, nonce: nonce++, gas: 21_000n, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n });

/** Every record of the journal's files, in file order. */
function records(journalDir: string): Array<{ seq?: number; method?: string; ok?: boolean; result?: unknown; params?: unknown }> {
  return readdirSync(journalDir)
    .sort()
    .flatMap((name) => readFileSync(join(journalDir, name), 'utf8').trim().split('\n'))
    .map((line) => JSON.parse(line) as { seq?: number })
    .filter((r) => r.seq !== undefined);
}

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID, marker: join(dir, 'anvil') });
  direct = nodeRpc(anvil.rpcUrl);
  const opened = await openJournal(join(dir, 'chain.journal'));
  if (!opened.ok) throw opened.error;
  journal = opened.value.journal;
  proxy = await startRpcProxy({ upstream: anvil.rpcUrl, journal, rpc: direct });
});

afterAll(async () => {
  await proxy?.close();
  await journal?.close();
  direct?.close();
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the journaling proxy', () => {
  test('reads pass through unjournaled; a send and a write are on disk, with their answers, before the client has them', async () => {
    const before = records(journal.dir).length;
    expect(await call(proxy.url, 'eth_blockNumber')).toBe(await direct.call('eth_blockNumber'));
    expect(await call(proxy.url, 'eth_getBalance', [sender.address, 'latest'])).toBe(await direct.call('eth_getBalance', [sender.address, 'latest']));
    expect(records(journal.dir)).toHaveLength(before);

    const receipt = await call<{ transactionHash: Hex; blockNumber: Hex }>(proxy.url, 'eth_sendRawTransactionSync', [await signed()]);
    const sent = records(journal.dir).slice(before);
    expect(sent.map((r) => r.method ?? (r.ok ? 'ok' : 'error'))).toEqual(['eth_sendRawTransactionSync', 'ok']);
    expect(sent[1]!.result).toMatchObject({ transactionHash: receipt.transactionHash, blockNumber: receipt.blockNumber, status: '0x1' });

    // A batch: only the write in it is journaled; every call is answered.
    const someone = privateKeyToAccount(generatePrivateKey()).address;
    const replies = (await post(proxy.url, [
      { jsonrpc: '2.0', id: 'a', method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: 'b', method: 'anvil_setBalance', params: [someone, '0x1234'] },
      { jsonrpc: '2.0', id: 'c', method: 'eth_getBalance', params: [someone, 'latest'] },
    ])) as Array<{ id: string; result: unknown }>;
    expect(Object.fromEntries(replies.map((r) => [r.id, r.result]))).toMatchObject({ a: '0x7a69', c: '0x1234' });
    const batch = records(journal.dir).slice(before + 2);
    expect(batch.map((r) => [r.method ?? 'outcome', r.params ?? r.result])).toEqual([
      ['anvil_setBalance', [someone, '0x1234']],
      ['outcome', null],
    ]);
  });

  test('what anvil does not run is journaled as not run; a body the proxy cannot read is refused', async () => {
    const someone = privateKeyToAccount(generatePrivateKey()).address;
    const setBalance = (id: number | undefined, wei: string) => ({ jsonrpc: '2.0', ...(id !== undefined && { id }), method: 'anvil_setBalance', params: [someone, wei] });
    const before = records(journal.dir).length;
    // anvil refuses a batch with a malformed element as a whole, and runs no notification: neither may replay.
    expect(await post(proxy.url, ['not a call', setBalance(2, '0x42')])).toMatchObject({ id: null, error: { code: -32600 } });
    await fetch(proxy.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(setBalance(undefined, '0x43')) });
    // Nor a call to a path it does not serve (the path goes through as it came).
    const elsewhere = await fetch(`${proxy.url}/elsewhere`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(setBalance(4, '0x45')) });
    expect(elsewhere.status).toBe(404);
    expect(await direct.call('eth_getBalance', [someone, 'latest'])).toBe('0x0');
    expect(records(journal.dir).slice(before).map((r) => r.method ?? r.ok)).toEqual(['anvil_setBalance', false, 'anvil_setBalance', false, 'anvil_setBalance', false]);

    const compressed = await fetch(proxy.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(setBalance(3, '0x44'))),
    });
    expect(compressed.status).toBe(415);
    expect(await direct.call('eth_getBalance', [someone, 'latest'])).toBe('0x0');
  });

  test('a send answered with its hash gets its receipt journaled once it is mined', async () => {
    const raw = await signed();
    const hash = await call<Hex>(proxy.url, 'eth_sendRawTransaction', [raw]);
    const seq = journal.nextSeq - 1;
    const receipt = await until('the receipt', () => call<{ blockNumber: Hex } | null>(proxy.url, 'eth_getTransactionReceipt', [hash]).then((r) => r ?? undefined));
    const outcomes = await until('its receipt in the journal', async () => {
      const found = records(journal.dir).filter((r) => r.seq === seq && r.method === undefined);
      return found.length === 2 ? found : undefined;
    });
    expect(outcomes.map((r) => r.result)).toEqual([hash, expect.objectContaining({ transactionHash: hash, blockNumber: receipt.blockNumber, status: '0x1' })]);
  });

  test('a write and a send wait for a snapshot dump; the mark splits them exactly', async () => {
    const someone = privateKeyToAccount(generatePrivateKey()).address;
    const raw = await signed();
    const hash = keccak256(raw);
    const { mark, value } = await proxy.cover(async () => {
      const writing = call(proxy.url, 'anvil_setBalance', [someone, '0x99']);
      const sending = call<{ transactionHash: Hex }>(proxy.url, 'eth_sendRawTransactionSync', [raw]);
      // Time for both to get through, were they not held back (no elapsed time is asserted).
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await direct.call('eth_getBalance', [someone, 'latest'])).toBe('0x0');
      // A send mined during the dump could leave its effects in the snapshot without its block.
      expect(await direct.call('eth_getTransactionByHash', [hash])).toBeNull();
      return { writing, sending }; // wrapped: an async function would wait for a promise it returns
    });
    await value.writing;
    expect((await value.sending).transactionHash).toBe(hash);
    expect(await direct.call('eth_getBalance', [someone, 'latest'])).toBe('0x99');
    const calls = records(journal.dir).filter((r) => r.method !== undefined);
    const write = calls.find((r) => r.method === 'anvil_setBalance' && (r.params as unknown[])[0] === someone)!;
    expect(write.seq).toBeGreaterThanOrEqual(mark.seq);
    const send = calls.find((r) => r.method === 'eth_sendRawTransactionSync' && (r.params as unknown[])[0] === raw)!;
    expect(send.seq).toBeGreaterThanOrEqual(mark.seq);
    expect(mark).toMatchObject({ journal: journal.id, unsettled: [], automine: true });
  });

  test('a send waiting in the pool when a snapshot is taken stays unsettled until it is mined', async () => {
    await direct.call('evm_setAutomine', [false]);
    try {
      await call(proxy.url, 'eth_sendRawTransaction', [await signed()]);
      const seq = journal.nextSeq - 1;
      const { mark } = await proxy.cover(async () => undefined);
      expect(mark.unsettled).toEqual([seq]);
      expect(mark.automine).toBe(false);
      await direct.call('evm_mine');
      expect((await proxy.cover(async () => undefined)).mark.unsettled).toEqual([]);
    } finally {
      await direct.call('evm_setAutomine', [true]);
    }
  });

  test('a call the journal cannot take is not sent', async () => {
    const opened = await openJournal(join(dir, 'closed.journal'));
    if (!opened.ok) throw opened.error;
    await opened.value.journal.close();
    const broken = await startRpcProxy({ upstream: anvil.rpcUrl, journal: opened.value.journal, rpc: direct });
    try {
      const someone = privateKeyToAccount(generatePrivateKey()).address;
      const reply = (await post(broken.url, { jsonrpc: '2.0', id: 7, method: 'anvil_setBalance', params: [someone, '0x5'] })) as { id: number; error: { message: string } };
      expect(reply.id).toBe(7);
      expect(reply.error.message).toMatch(/^devnet: the call was not sent: devnet journal .* is closed/);
      expect(await direct.call('eth_getBalance', [someone, 'latest'])).toBe('0x0');
      // Reads still work.
      expect(await call(broken.url, 'eth_chainId')).toBe('0x7a69');
    } finally {
      await broken.close();
    }
  });
});
