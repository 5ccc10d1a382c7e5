/**
 * A crash loop: transactions stream into the devnet through its manifest's rpcUrl while the whole process group
 * (node and the anvils) is killed with SIGKILL, then the devnet is started again on the same data dir. Every
 * transaction whose receipt a client was given must be on the restarted chain, executed as it was, and the
 * chain's balances and nonces must agree with the transactions it holds. And a journal that cannot bring a
 * chain back makes the start refuse, saying what to do.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { encodeFunctionData, keccak256, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { counterAbi } from './contracts.ts';
import { DevnetError, loadManifest, startDevnet } from './devnet.ts';
import { journalDir, openJournal } from './journal.ts';
import type { DevnetManifest } from './manifest.ts';
import { spawnDevnetChild, type DevnetChildProcess } from './testing/devnetProcess.ts';
import { devnetAnvilPids } from './testing/processes.ts';

const repoRoot = join(import.meta.dirname, '../..');

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

interface Receipt {
  status: Hex;
  gasUsed: Hex;
  effectiveGasPrice: Hex;
  blockNumber: Hex;
}

/** One transaction a sender signed and handed to the devnet, and the receipt it was given, if any. */
interface Sent {
  chain: 'ethereum' | 'base';
  hash: Hex;
  from: Address;
  nonce: number;
  to: Address;
  value: bigint;
  /** Counter.incrementBy(k) on ethereum: the k. */
  increment?: bigint;
  receipt?: Receipt;
  /** The kill it was sent before, counted from 0. */
  round: number;
  /** The highest block of a receipt on its chain when it was sent: it was mined after it, if at all. */
  headWhenSent: number;
}

const GWEI = 10n ** 9n;

/**
 * A sender: signs its transactions itself (so it knows each hash before sending) and sends them one after the
 * other until the devnet stops answering. `sync`: eth_sendRawTransactionSync, as the service's executors send on
 * anvil; otherwise eth_sendRawTransaction, then the receipt is polled, as the faucet does.
 */
async function sendUntilKilled(opts: {
  rpcUrl: string;
  chain: Sent['chain'];
  chainId: number;
  key: Hex;
  recipient: Address;
  counter?: Address;
  sync: boolean;
  sent: Map<Hex, Sent>;
  round: number;
  /** The highest block of a receipt so far, per chain: shared by the senders of a chain. */
  heads: Record<Sent['chain'], number>;
  onReceipt: () => void;
}): Promise<void> {
  const account = privateKeyToAccount(opts.key);
  let nonce = Number(await rpc<Hex>(opts.rpcUrl, 'eth_getTransactionCount', [account.address, 'pending']));
  for (let i = 0; ; i++) {
    const increment = opts.counter && i % 2 === 1 ? BigInt(1 + (nonce % 7)) : undefined;
    const value = increment === undefined ? 1_000n + BigInt(nonce) : 0n;
    const to = increment === undefined ? opts.recipient : opts.counter!;
    const raw = await account.signTransaction({
      chainId: opts.chainId,
      type: 'eip1559',
      to,
      value,
      data: increment === undefined ? undefined : encodeFunctionData({ abi: counterAbi, functionName: 'incrementBy', args: [increment] }),
      nonce,
      gas: increment === undefined ? 21_000n : 100_000n,
      maxFeePerGas: 50n * GWEI,
      maxPriorityFeePerGas: GWEI,
    });
    const hash = keccak256(raw);
    // Signed again after a restart with the same nonce and fields, it is the same transaction.
    const sent: Sent = opts.sent.get(hash) ?? { chain: opts.chain, hash, from: account.address, nonce, to, value, ...(increment !== undefined && { increment }), round: 0, headWhenSent: 0 };
    Object.assign(sent, { round: opts.round, headWhenSent: opts.heads[opts.chain] });
    opts.sent.set(hash, sent);
    try {
      if (opts.sync) {
        sent.receipt = await rpc<Receipt>(opts.rpcUrl, 'eth_sendRawTransactionSync', [raw]);
      } else {
        await rpc<Hex>(opts.rpcUrl, 'eth_sendRawTransaction', [raw]);
        for (;;) {
          const receipt = await rpc<Receipt | null>(opts.rpcUrl, 'eth_getTransactionReceipt', [sent.hash]);
          if (receipt) {
            sent.receipt = receipt;
            break;
          }
          await new Promise((r) => setTimeout(r, 5));
        }
      }
    } catch {
      return; // the devnet is gone (killed): whether this one made it is for the restarted chain to say
    }
    opts.heads[opts.chain] = Math.max(opts.heads[opts.chain], Number(sent.receipt.blockNumber));
    nonce++;
    opts.onReceipt();
  }
}

function chainOf(manifest: DevnetManifest, name: Sent['chain']) {
  return manifest.chains.find((c) => c.name === name)!;
}

describe('a devnet killed with SIGKILL while transactions stream in', () => {
  test('keeps every transaction it gave a receipt for, executed as it was, over five kills', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-wallet-devnet-crash-'));
    dirs.push(dataDir);
    let running: DevnetChildProcess | undefined;
    onTestFinished(async () => {
      if (running?.child.exitCode === null && running.child.signalCode === null) process.kill(-running.child.pid!, 'SIGKILL');
      for (const pid of devnetAnvilPids(dataDir)) process.kill(pid, 'SIGKILL');
    });

    running = await spawnDevnetChild(dataDir, 'wait', { detached: true, log: true });
    let manifest = loadManifest(join(dataDir, 'devnet', 'manifest.json'));
    const funded = manifest.accounts.funded;
    // ethereum: three senders through eth_sendRawTransactionSync; base: two through eth_sendRawTransaction.
    const senders = [
      { chain: 'ethereum' as const, key: funded[0]!.privateKey, sync: true },
      { chain: 'ethereum' as const, key: funded[1]!.privateKey, sync: true },
      { chain: 'ethereum' as const, key: funded[2]!.privateKey, sync: true },
      { chain: 'base' as const, key: funded[3]!.privateKey, sync: false },
      { chain: 'base' as const, key: funded[4]!.privateKey, sync: false },
    ].map((s) => ({ ...s, address: privateKeyToAccount(s.key).address, recipient: privateKeyToAccount(generatePrivateKey()).address }));
    const counter = chainOf(manifest, 'ethereum').testContracts.counter;
    const readCounter = async (m: DevnetManifest) =>
      BigInt(await rpc<Hex>(chainOf(m, 'ethereum').rpcUrl, 'eth_call', [{ to: counter, data: encodeFunctionData({ abi: counterAbi, functionName: 'number' }) }, 'latest']));
    const initialBalance = new Map<Address, bigint>();
    for (const s of senders) initialBalance.set(s.address, BigInt(await rpc<Hex>(chainOf(manifest, s.chain).rpcUrl, 'eth_getBalance', [s.address, 'latest'])));
    const initialCounter = await readCounter(manifest);
    const sent = new Map<Hex, Sent>();
    let replays = 0;

    // Kill after a different number of receipts each round, so the kills land at different points.
    for (const [round, receiptsBeforeKill] of [25, 8, 40, 15, 30].entries()) {
      const heads = { ethereum: 0, base: 0 };
      let receipts = 0;
      let killed!: () => void;
      const enough = new Promise<void>((r) => (killed = r));
      const streams = senders.map((s) =>
        sendUntilKilled({
          rpcUrl: chainOf(manifest, s.chain).rpcUrl,
          chain: s.chain,
          chainId: chainOf(manifest, s.chain).chainId,
          key: s.key,
          recipient: s.recipient,
          counter: s.chain === 'ethereum' ? counter : undefined,
          sync: s.sync,
          sent,
          round,
          heads,
          onReceipt: () => {
            if (++receipts === receiptsBeforeKill) killed();
          },
        }),
      );
      await enough;
      process.kill(-running.child.pid!, 'SIGKILL');
      await Promise.all([running.exited, ...streams]);
      expect(devnetAnvilPids(dataDir)).toEqual([]);

      running = await spawnDevnetChild(dataDir, 'wait', { detached: true, log: true });
      manifest = loadManifest(join(dataDir, 'devnet', 'manifest.json'));
      replays += running.output().split('\n').filter((l) => /replayed [1-9]/.test(l)).length;

      // Every receipt a client was given is on the restarted chain, with the same outcome and gas.
      const onChain = new Map<Hex, Receipt>();
      for (const tx of sent.values()) {
        const receipt = await rpc<Receipt | null>(chainOf(manifest, tx.chain).rpcUrl, 'eth_getTransactionReceipt', [tx.hash]);
        if (receipt) onChain.set(tx.hash, receipt);
      }
      const lost = [...sent.values()].filter((tx) => tx.receipt && !onChain.has(tx.hash)).map((tx) => `${tx.chain} ${tx.hash} (block ${Number(tx.receipt!.blockNumber)})`);
      expect(lost, 'transactions answered with a receipt, missing after the restart').toEqual([]);
      // Executed as it was. On ethereum, whose receipts name their blocks, each also paid what it paid: the
      // replay mines in the blocks' order, which the base fee follows. Not past the first block that a send
      // still unanswered at the kill may have landed in: where it did, nobody can know. (On base, answered
      // with hashes, the blocks are journaled a moment after the answer: a kill in between can move one.)
      const unanswered = [...sent.values()].filter((t) => t.chain === 'ethereum' && t.round === round && !t.receipt);
      const horizon = Math.min(...unanswered.map((t) => t.headWhenSent));
      for (const tx of [...sent.values()].filter((t) => t.receipt)) {
        const again = onChain.get(tx.hash)!;
        const { status, gasUsed, effectiveGasPrice, blockNumber } = tx.receipt!;
        const where = `${tx.chain} ${tx.hash}, block ${Number(blockNumber)} then ${Number(again.blockNumber)} now`;
        expect({ status: again.status, gasUsed: again.gasUsed }, where).toEqual({ status, gasUsed });
        if (tx.chain === 'ethereum' && Number(blockNumber) <= horizon) expect(again.effectiveGasPrice, where).toBe(effectiveGasPrice);
        tx.receipt = again; // what the next restart must keep
      }

      // The chain agrees with the transactions it holds: nonces without gaps, balances, the counter.
      for (const s of senders) {
        const url = chainOf(manifest, s.chain).rpcUrl;
        const mine = [...sent.values()].filter((tx) => tx.from === s.address && onChain.has(tx.hash));
        expect(mine.map((tx) => tx.nonce).sort((a, b) => a - b), s.address).toEqual(mine.map((_, i) => mine[0]!.nonce + i));
        expect(Number(await rpc<Hex>(url, 'eth_getTransactionCount', [s.address, 'latest'])), s.address).toBe((mine.at(-1)?.nonce ?? -1) + 1);
        const spent = mine.reduce((sum, tx) => {
          const r = onChain.get(tx.hash)!;
          return sum + tx.value + BigInt(r.gasUsed) * BigInt(r.effectiveGasPrice);
        }, 0n);
        expect(BigInt(await rpc<Hex>(url, 'eth_getBalance', [s.address, 'latest'])), s.address).toBe(initialBalance.get(s.address)! - spent);
        const received = mine.filter((tx) => tx.to === s.recipient).reduce((sum, tx) => sum + tx.value, 0n);
        expect(BigInt(await rpc<Hex>(url, 'eth_getBalance', [s.recipient, 'latest'])), s.recipient).toBe(received);
      }
      const increments = [...sent.values()].filter((tx) => tx.increment !== undefined && onChain.has(tx.hash)).reduce((sum, tx) => sum + tx.increment!, 0n);
      expect(await readCounter(manifest)).toBe(initialCounter + increments);
    }
    // Not luck with snapshot timing: the journal did bring back what the snapshots had missed.
    expect(replays).toBeGreaterThan(0);
    running.child.kill('SIGTERM');
    await running.exited;
  });
});

describe('a journal that cannot bring a chain back', () => {
  test('makes the start refuse with what is wrong and what to do, and changes nothing on disk', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'agent-wallet-devnet-refuse-'));
    dirs.push(dataDir);
    const devnet = await startDevnet({ dataDir, log: () => {} });
    const chainId = devnet.manifest.chains.find((c) => c.name === 'ethereum')!.chainId;
    await devnet.stop();

    // The journal says a transaction was mined and its receipt given, but its sender has no funds here: as if
    // the journal came from another chain, or anvil changed its rules. Nothing can make it happen again.
    const stranger = privateKeyToAccount(generatePrivateKey());
    const raw = await stranger.signTransaction({ chainId, type: 'eip1559', to: stranger.address, value: 1n, nonce: 0, gas: 21_000n, maxFeePerGas: 50n * GWEI, maxPriorityFeePerGas: GWEI });
    const hash = keccak256(raw);
    const opened = await openJournal(journalDir(join(dataDir, 'devnet'), 'ethereum'));
    if (!opened.ok) throw opened.error;
    const { journal } = opened.value;
    const { seqs, durable } = journal.append([{ method: 'eth_sendRawTransactionSync', params: [raw] }]);
    await durable;
    await journal.recordOutcome(seqs[0]!, { ok: true, result: { transactionHash: hash, status: '0x1', gasUsed: '0x5208', blockNumber: '0x99' } });
    await journal.close();
    const files = () =>
      readdirSync(join(dataDir, 'devnet'), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && !e.name.endsWith('.pid'))
        .map((e) => [join(e.parentPath, e.name), readFileSync(join(e.parentPath, e.name)).toString('base64')])
        .sort();
    const before = files();

    // What an operator sees: `agent-wallet dev` exits with the reason.
    const child = spawn(process.execPath, ['bin/agent-wallet.js', 'dev', '--data-dir', dataDir, '--port', '0', '--faucet-port', '0'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    onTestFinished(() => {
      child.kill('SIGKILL');
      for (const pid of devnetAnvilPids(dataDir)) process.kill(pid, 'SIGKILL');
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code, stderr).toBe(1);
    expect(stderr).toContain('devnet: the ethereum chain cannot be brought back to what its clients were answered');
    expect(stderr).toContain(`journal entry ${seqs[0]} (eth_sendRawTransactionSync of transaction ${hash}) cannot be replayed`);
    expect(stderr).toMatch(/anvil accepted it before the crash and mined it, and refuses it now: .*insufficient funds/i);
    expect(stderr).toContain(`remove ${join(dataDir, 'devnet')}`);
    expect(stderr).toContain(join(dataDir, 'store'));
    expect(stderr).toContain('CHAIN HISTORY MISMATCH');
    expect(devnetAnvilPids(dataDir)).toEqual([]);
    expect(files()).toEqual(before);

    // And again: nothing was consumed by the refusal.
    const again = await startDevnet({ dataDir, log: () => {} }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(DevnetError);
    expect((again as DevnetError).code).toBe('ReplayRefused');
    expect(devnetAnvilPids(dataDir)).toEqual([]);
  });
});
