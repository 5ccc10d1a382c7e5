import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, test } from 'vitest';
import { keccak256, type Hex } from 'viem';
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { ANVIL_MNEMONIC } from './accounts.ts';
import { startAnvil, type AnvilInstance } from './anvil.ts';
import { openJournal, type JournalEntry } from './journal.ts';
import { nodeRpc, type NodeRpc } from './rpc.ts';
import { startRpcProxy } from './rpcProxy.ts';
import { inReplayOrder, replayJournal } from './replay.ts';

const CHAIN_ID = 31337;
const dir = mkdtempSync(join(tmpdir(), 'agent-wallet-replay-'));
const started: Array<{ anvil: AnvilInstance; rpc: NodeRpc }> = [];
afterAll(async () => {
  for (const { anvil, rpc } of started) {
    rpc.close();
    await anvil.stop();
  }
  rmSync(dir, { recursive: true, force: true });
});

async function anvilNode(loadStatePath?: string) {
  const anvil = await startAnvil({ chainId: CHAIN_ID, marker: join(dir, `anvil-${started.length}`), loadStatePath });
  const rpc = nodeRpc(anvil.rpcUrl);
  started.push({ anvil, rpc });
  return { anvil, rpc };
}

async function call<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const reply = (await response.json()) as { result?: T; error?: { message: string } };
  if (reply.error) throw new Error(`${method}: ${reply.error.message}`);
  return reply.result as T;
}

const account = (i: number) => mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: i });
const nonces = new Map<string, number>();
function sign(from: ReturnType<typeof account> | ReturnType<typeof privateKeyToAccount>, opts: { nonce?: number; value?: bigint } = {}): Promise<Hex> {
  const nonce = opts.nonce ?? nonces.get(from.address) ?? 0;
  if (opts.nonce === undefined) nonces.set(from.address, nonce + 1);
  return from.signTransaction({ chainId: CHAIN_ID, type: 'eip1559', to: from.address, value: opts.value ?? 1n, nonce, gas: 21_000n, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n });
}

interface Receipt {
  transactionHash: Hex;
  status: Hex;
  gasUsed: Hex;
  effectiveGasPrice: Hex;
  blockNumber: Hex;
}
const fate = (r: Receipt | null) => r && { status: r.status, gasUsed: r.gasUsed, effectiveGasPrice: r.effectiveGasPrice, blockNumber: r.blockNumber };

describe('replayJournal', () => {
  test('brings a chain loaded from a snapshot to where the journal left it: transactions, cheats, reverts, shared blocks', async () => {
    const original = await anvilNode();
    const opened = await openJournal(join(dir, 'original.journal'));
    if (!opened.ok) throw opened.error;
    const journal = opened.value.journal;
    const proxy = await startRpcProxy({ upstream: original.anvil.rpcUrl, journal, rpc: original.rpc });
    const [a, b, c] = [account(1), account(2), account(3)];
    const [x, y] = [privateKeyToAccount(generatePrivateKey()).address, privateKeyToAccount(generatePrivateKey()).address];
    const sync = async (raw: Hex) => call<Receipt>(proxy.url, 'eth_sendRawTransactionSync', [raw]);

    const tx1 = await sync(await sign(a));
    await call(proxy.url, 'anvil_setBalance', [x, '0x5']);
    // The snapshot a restart would load.
    const { mark, value: dumped } = await proxy.cover(() => original.rpc.call<Hex>('anvil_dumpState'));

    // After it: a revert of a transaction, blocks of one and of two, an asynchronous send, cheats, a refusal.
    const id = await call<Hex>(proxy.url, 'evm_snapshot');
    const reverted = await sync(await sign(a, { value: 3n }));
    expect(await call(proxy.url, 'evm_revert', [id])).toBe(true);
    nonces.set(a.address, nonces.get(a.address)! - 1);
    const tx3 = await sync(await sign(b));
    await call(proxy.url, 'evm_setAutomine', [false]);
    const [raw4, raw5] = [await sign(a), await sign(b)];
    await call(proxy.url, 'eth_sendRawTransaction', [raw4]);
    await call(proxy.url, 'eth_sendRawTransaction', [raw5]);
    await call(proxy.url, 'evm_mine');
    await call(proxy.url, 'evm_setAutomine', [true]);
    const raw6 = await sign(c);
    await call(proxy.url, 'eth_sendRawTransaction', [raw6]);
    await call(proxy.url, 'anvil_setBalance', [y, '0x7']);
    await expect(sync(await sign(a, { nonce: 0, value: 2n }))).rejects.toThrow(/nonce too low/);
    await call(proxy.url, 'anvil_mine', ['0x2']);
    const after = [tx3.transactionHash, keccak256(raw4), keccak256(raw5), keccak256(raw6)];
    const expected = {
      receipts: await Promise.all(after.map(async (h) => fate(await original.rpc.call<Receipt>('eth_getTransactionReceipt', [h])))),
      balances: await Promise.all([a.address, b.address, c.address, x, y].map((who) => original.rpc.call('eth_getBalance', [who, 'latest']))),
      head: await original.rpc.call('eth_blockNumber'),
    };
    expect(expected.receipts[1]!.blockNumber).toBe(expected.receipts[2]!.blockNumber);
    await proxy.close();
    await journal.close();

    const statePath = join(dir, 'state.json');
    writeFileSync(statePath, gunzipSync(Buffer.from(dumped.slice(2), 'hex')));
    const restored = await anvilNode(statePath);
    const reopened = await openJournal(join(dir, 'original.journal'));
    if (!reopened.ok) throw reopened.error;
    await reopened.value.journal.close();
    const replayed = await replayJournal({ rpc: restored.rpc, entries: reopened.value.entries, mark });
    expect(replayed).toMatchObject({ ok: true, value: { dropped: 1, pending: [] } });

    expect(await restored.rpc.call('eth_getTransactionReceipt', [tx1.transactionHash])).not.toBeNull();
    expect(await restored.rpc.call('eth_getTransactionReceipt', [reverted.transactionHash])).toBeNull();
    expect(await Promise.all(after.map(async (h) => fate(await restored.rpc.call<Receipt>('eth_getTransactionReceipt', [h]))))).toEqual(expected.receipts);
    expect(await Promise.all([a.address, b.address, c.address, x, y].map((who) => restored.rpc.call('eth_getBalance', [who, 'latest'])))).toEqual(expected.balances);
    expect(await restored.rpc.call('eth_blockNumber')).toBe(expected.head);
  });

  test('refuses what it cannot replay as it was answered, and drops what nobody was told had happened', async () => {
    const { rpc } = await anvilNode();
    const broke = privateKeyToAccount(generatePrivateKey());
    const entry = (seq: number, method: string, params: unknown[], outcome?: JournalEntry['outcome']): JournalEntry => ({ seq, t: 0, method, params, ...(outcome && { outcome }) });
    const receiptDigest = (hash: Hex, gasUsed = '0x5208') => ({ ok: true as const, result: { transactionHash: hash, status: '0x1', gasUsed, blockNumber: '0x1' } });
    const replay = (entries: JournalEntry[]) => replayJournal({ rpc, entries, mark: undefined });

    // A transaction it gave a receipt for, which anvil now refuses (its sender has no funds on this chain).
    const unfunded = await sign(broke, { nonce: 0 });
    expect(await replay([entry(0, 'eth_sendRawTransactionSync', [unfunded], receiptDigest(keccak256(unfunded)))])).toMatchObject({
      ok: false,
      error: { seq: 0, hash: keccak256(unfunded), reason: expect.stringMatching(/accepted it before the crash and mined it, and refuses it now: .*insufficient funds/i) },
    });
    // The same, never answered: nobody heard of it.
    expect(await replay([entry(0, 'eth_sendRawTransactionSync', [unfunded])])).toMatchObject({ ok: true, value: { replayed: 0, dropped: 1 } });

    // Going back to a snapshot taken before the loaded state.
    expect(await replay([entry(3, 'evm_revert', ['0x0'], { ok: true, result: true })])).toMatchObject({
      ok: false,
      error: { seq: 3, method: 'evm_revert', reason: expect.stringContaining('taken before the last saved state') },
    });

    // Executed otherwise than before (here: other gas).
    const raw = await sign(account(4));
    expect(await replay([entry(5, 'eth_sendRawTransactionSync', [raw], receiptDigest(keccak256(raw), '0x5209'))])).toMatchObject({
      ok: false,
      error: { seq: 5, reason: 'it ended with status 0x1 and used 21001 gas before the crash; replayed, status 0x1 and 21000 gas' },
    });
  });
});

describe('inReplayOrder', () => {
  const send = (seq: number, outcome?: { block?: number; index?: number; answered?: number }): JournalEntry => ({
    seq,
    t: 0,
    method: 'eth_sendRawTransactionSync',
    params: ['0x00'],
    ...(outcome && {
      answered: outcome.answered ?? 0,
      outcome:
        outcome.block === undefined
          ? { ok: true, result: `0x${'0'.repeat(64)}` }
          : { ok: true, result: { transactionHash: '0x', status: '0x1', gasUsed: '0x0', blockNumber: `0x${outcome.block.toString(16)}`, transactionIndex: `0x${(outcome.index ?? 0).toString(16)}` } },
    }),
  });
  const write = (seq: number): JournalEntry => ({ seq, t: 0, method: 'anvil_setBalance', params: [] });

  test('in the blocks receipts named, then in the order answers came; the unanswered and writes keep their places', () => {
    const entries = [
      send(0, { block: 12 }),
      send(1), // never answered
      send(2, { block: 11, index: 1 }),
      send(3, { block: 11, index: 0 }),
      write(4),
      send(5, { answered: 9 }),
      send(6, { answered: 8 }),
      send(7, { block: 20 }),
    ];
    expect(inReplayOrder(entries).map((e) => e.seq)).toEqual([3, 1, 2, 0, 4, 6, 5, 7]);
  });
});
