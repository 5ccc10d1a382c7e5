/**
 * The sending accounts' nonce owner against the run's devnet: x402 settlements signed, claimed (here: recorded)
 * and sent, each payer's authorization real (EIP-712 signed by a fresh key), each test with a settler of its own.
 */
import { describe, expect, test } from 'vitest';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { eip3009TokenAbi, testStablecoinAbi } from '../../devnet/contracts.ts';
import { createMemoryLockManager } from '../../locks/memory.ts';
import { until } from '../../../test/support/until.ts';
import { readFees } from '../fees.ts';
import { chainUnderTest } from '../../../test/support/chainUnderTest.ts';
import type { FaucetTransferPurpose, X402SettlementPurpose } from '../types.ts';
import { randomUUID } from 'node:crypto';
import { devnetChain, devnetWalletClient } from '../../devnet/clients.ts';
import { createAccountSender } from './accountSender.ts';
import { fundNative, x402Payment } from '../../../test/support/x402.ts';

const { config, client } = chainUnderTest('arbitrum');
const usdc = config.tokens.find((t) => t.symbol === 'USDC')!;
const weth = config.tokens.find((t) => t.symbol === 'WETH')!;

const fund = (a: Address) => fundNative(client, a);
const payment = (opts: { to?: Address; token?: Address } = {}) => x402Payment(config, client, opts);

/** A settler of its own (funded with native coin) and the sender that owns its nonce. */
async function newSender(sendWindowMs = 60_000) {
  const settler = privateKeyToAccount(generatePrivateKey());
  await fund(settler.address);
  const sender = createAccountSender({
    config,
    client,
    locks: createMemoryLockManager(),
    fees: () => readFees(client),
    accounts: { x402Settlement: settler },
    sendWindowMs,
  });
  return { settler, sender };
}

const chainNonce = (a: Address) => client.getTransactionCount({ address: a, blockTag: 'latest' });
const mined = (hash: Hex) => client.waitForTransactionReceipt({ hash, timeout: 30_000 });
const spent = (p: X402SettlementPurpose) =>
  client.readContract({ address: usdc.address, abi: eip3009TokenAbi, functionName: 'authorizationState', args: [p.authorization.from, p.authorization.nonce] });

function signed<T>(r: { ok: true; value: T } | { ok: false; error: { code: string; message: string } }): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

describe('x402 settlements from the settler', () => {
  test('concurrent settlements take consecutive nonces; each is sent as signed and spends its authorization', async () => {
    const { settler, sender } = await newSender();
    const payments = await Promise.all([payment(), payment(), payment()]);
    const start = await chainNonce(settler.address);
    const txs = await Promise.all(payments.map(async (p) => signed(await sender.signSend(p))));
    expect(txs.map((t) => t.nonce).sort((x, y) => x - y)).toEqual([start, start + 1, start + 2]);
    for (const t of txs) expect(t).toMatchObject({ account: settler.address, purpose: 'x402Settlement', token: usdc.address });
    // What the caller claims is what lands: the hash signed is the hash mined.
    await Promise.all(txs.map(async (t) => expect(await sender.send(t.hash)).toEqual({ ok: true, value: undefined })));
    for (const t of txs) expect((await mined(t.hash)).status).toBe('success');
    for (const p of payments) expect(await spent(p)).toBe(true);
    expect(await chainNonce(settler.address)).toBe(start + 3);
    sender.close();
  });

  test('signing an unsent authorization again answers the same transaction; a second send is ok and sends nothing new', async () => {
    const { settler, sender } = await newSender();
    const p = await payment();
    const first = signed(await sender.signSend(p));
    expect(signed(await sender.signSend(p))).toEqual(first);
    expect((await sender.send(first.hash)).ok).toBe(true);
    expect((await sender.send(first.hash)).ok).toBe(true);
    await mined(first.hash);
    expect(await chainNonce(settler.address)).toBe(first.nonce + 1);
    // Once sent and spent, the token refuses it: nothing is signed, no nonce taken.
    expect(await sender.signSend(p)).toMatchObject({ ok: false, error: { code: 'simulation_reverted' } });
    sender.close();
  });

  test('a signed transaction never sent leaves no gap: behind a later one its nonce is filled, alone it is given back', async () => {
    const { settler, sender } = await newSender(300);
    const [abandoned, kept, later] = await Promise.all([payment(), payment(), payment()]);
    const a = signed(await sender.signSend(abandoned));
    const b = signed(await sender.signSend(kept));
    expect(b.nonce).toBe(a.nonce + 1);
    expect((await sender.send(b.hash)).ok).toBe(true);
    // b waits behind a's nonce until a's window closes and a 0-value transfer fills it.
    expect((await mined(b.hash)).status).toBe('success');
    expect(await chainNonce(settler.address)).toBe(b.nonce + 1);
    expect(await sender.send(a.hash)).toMatchObject({ ok: false, error: { code: 'expired' } });
    expect(await spent(abandoned)).toBe(false);

    // Alone (the account's last nonce, never broadcast): the nonce is handed out again, no transaction spent on it.
    const c = signed(await sender.signSend(later));
    expect(c.nonce).toBe(b.nonce + 1);
    const again = await until('the send window of the unsent transaction to close', async () => {
      const r = signed(await sender.signSend(later));
      return r.sendBy !== c.sendBy ? r : undefined;
    });
    expect(again.nonce).toBe(c.nonce);
    expect((await sender.send(again.hash)).ok).toBe(true);
    expect((await mined(again.hash)).status).toBe('success');
    expect(await chainNonce(settler.address)).toBe(c.nonce + 1);
    sender.close();
  });

  test('an abandoned transaction is never sent, and the next one takes its nonce at once', async () => {
    const { settler, sender } = await newSender();
    const [refused, next] = await Promise.all([payment(), payment()]);
    const a = signed(await sender.signSend(refused));
    expect(await sender.abandon(a.hash)).toEqual({ ok: true, value: undefined });
    expect(await sender.send(a.hash)).toMatchObject({ ok: false, error: { code: 'expired' } });
    const b = signed(await sender.signSend(next));
    expect(b.nonce).toBe(a.nonce);
    expect((await sender.send(b.hash)).ok).toBe(true);
    expect((await mined(b.hash)).status).toBe('success');
    expect(await chainNonce(settler.address)).toBe(a.nonce + 1);
    expect(await spent(refused)).toBe(false);
    sender.close();
  });
});

describe('purposes outside the rules are refused with a code, and nothing is signed', () => {
  test('a token not accepted for x402, another recipient, a bad signature, no settler', async () => {
    const { settler, sender } = await newSender();
    const start = await chainNonce(settler.address);
    const refusal = async (p: X402SettlementPurpose) => {
      const r = await sender.signSend(p);
      return r.ok ? 'signed' : r.error.code;
    };
    expect(await refusal(await payment({ token: weth.address }))).toBe('purpose_refused');
    expect(await refusal(await payment({ to: settler.address }))).toBe('purpose_refused');
    const p = await payment();
    expect(await refusal({ ...p, authorization: { ...p.authorization, value: '-1' } })).toBe('purpose_refused');
    // Well-formed, but the token refuses it (signed for another value): never signed, no nonce taken.
    expect(await refusal({ ...p, authorization: { ...p.authorization, value: '1' } })).toBe('simulation_reverted');
    expect(await refusal({ ...p, kind: 'somethingElse' } as unknown as X402SettlementPurpose)).toBe('purpose_refused');
    const none = createAccountSender({ config, client, locks: createMemoryLockManager(), fees: () => readFees(client), accounts: {} });
    expect(await none.signSend(p)).toMatchObject({ ok: false, error: { code: 'no_account' } });
    expect(await sender.send('0x' + '00'.repeat(32) as Hex)).toMatchObject({ ok: false, error: { code: 'unknown_transaction' } });
    expect(signed(await sender.signSend(p)).nonce).toBe(start);
    sender.close();
  });
});

describe('faucet transfers: the native coin or a configured token, within the faucet cap, never calldata of the caller', () => {
  const aUSD = config.tokens.find((t) => t.symbol === 'aUSD')!;
  /** 100 aUSD and 0.01 of the native coin per transfer; no cap for USDC, so the faucet never sends it. */
  const capped = { ...config, faucetCap: { native: '0.01', tokens: { aUSD: '100' } } };
  const executor = privateKeyToAccount(config.executorKeys[0]!).address;

  /** A faucet account of its own: native coin for gas (unless told otherwise) and 1000 aUSD. */
  async function newFaucet(opts: { gas?: boolean; aUSD?: bigint } = {}) {
    const key = generatePrivateKey();
    const faucet = privateKeyToAccount(key);
    await fund(faucet.address);
    const minted = opts.aUSD ?? 1_000_000_000n;
    if (minted > 0n) {
      await devnetWalletClient(devnetChain(config), key).writeContractSync({ address: aUSD.address, abi: testStablecoinAbi, functionName: 'mint', args: [faucet.address, minted] });
    }
    if (opts.gas === false) await client.request({ method: 'anvil_setBalance' as 'eth_chainId', params: [faucet.address, '0x0'] as unknown as undefined });
    const settler = privateKeyToAccount(generatePrivateKey());
    const sender = createAccountSender({
      config: capped,
      client,
      locks: createMemoryLockManager(),
      fees: () => readFees(client),
      accounts: { faucetTransfer: faucet, x402Settlement: settler },
      serviceAccounts: [executor],
    });
    return { faucet, settler, sender };
  }
  const aUSDOf = (owner: Address) => client.readContract({ address: aUSD.address, abi: testStablecoinAbi, functionName: 'balanceOf', args: [owner] });
  const drip = (over: Partial<FaucetTransferPurpose> = {}): FaucetTransferPurpose => ({
    kind: 'faucetTransfer',
    id: randomUUID(),
    asset: aUSD.address,
    to: privateKeyToAccount(generatePrivateKey()).address,
    amount: '100000000',
    ...over,
  });

  test('a token transfer up to the cap: signed once per id, sent as signed, the tokens moved', async () => {
    const { faucet, sender } = await newFaucet();
    const p = drip();
    const first = signed(await sender.signSend(p));
    expect(first).toMatchObject({ account: faucet.address, purpose: 'faucetTransfer', token: aUSD.address });
    expect(first.from).toBeUndefined();
    // A sign retried with the same id (an answer lost on the way) gets the very transaction back.
    expect(signed(await sender.signSend(p))).toEqual(first);
    expect(await sender.send(first.hash)).toEqual({ ok: true, value: undefined });
    const receipt = await mined(first.hash);
    expect(receipt).toMatchObject({ status: 'success', from: faucet.address.toLowerCase(), to: aUSD.address.toLowerCase() });
    expect(await aUSDOf(p.to)).toBe(100_000_000n);
    sender.close();
  });

  test('the native coin up to its cap', async () => {
    const { sender } = await newFaucet();
    const p = drip({ asset: 'native', amount: String(10n ** 16n) });
    const tx = signed(await sender.signSend(p));
    expect(tx.token).toBeUndefined();
    expect((await sender.send(tx.hash)).ok).toBe(true);
    expect((await mined(tx.hash)).status).toBe('success');
    expect(await client.getBalance({ address: p.to })).toBe(10n ** 16n);
    sender.close();
  });

  test('refused with purpose_refused, nothing signed and no nonce taken: above the cap, an asset without a cap, a token not configured, the service’s own accounts, malformed fields', async () => {
    const { faucet, settler, sender } = await newFaucet();
    const usdc = config.tokens.find((t) => t.symbol === 'USDC')!;
    const start = await chainNonce(faucet.address);
    const refusal = async (p: FaucetTransferPurpose) => {
      const r = await sender.signSend(p);
      return r.ok ? 'signed' : `${r.error.code}: ${r.error.message}`;
    };
    expect(await refusal(drip({ amount: '100000001' }))).toMatch(/^purpose_refused: 100000001 is above the faucet's cap of 100000000 aUSD/);
    expect(await refusal(drip({ asset: 'native', amount: String(10n ** 16n + 1n) }))).toMatch(/^purpose_refused: .* above the faucet's cap/);
    expect(await refusal(drip({ asset: usdc.address, amount: '1' }))).toMatch(/^purpose_refused: the faucet sends no USDC/);
    expect(await refusal(drip({ asset: privateKeyToAccount(generatePrivateKey()).address }))).toMatch(/^purpose_refused: .* is not a token configured/);
    for (const to of [config.treasury, executor, settler.address, faucet.address, '0x0000000000000000000000000000000000000000' as Address]) {
      expect(await refusal(drip({ to }))).toMatch(/^purpose_refused: .* the service's own account/);
    }
    expect(await refusal(drip({ amount: '0' }))).toMatch(/^purpose_refused: the amount must be/);
    expect(await refusal(drip({ amount: '1e6' }))).toMatch(/^purpose_refused: the amount must be/);
    expect(await refusal(drip({ id: 'has space' }))).toMatch(/^purpose_refused: a faucet transfer needs an id/);
    // Only named fields reach the worker: whatever else a caller adds is not sent (the calldata is the worker's).
    const withData = { ...drip(), data: '0xdeadbeef', to: aUSD.address } as FaucetTransferPurpose;
    const built = signed(await sender.signSend(withData));
    expect(built.token).toBe(aUSD.address);
    await sender.abandon(built.hash);
    expect(await chainNonce(faucet.address)).toBe(start);
    const none = createAccountSender({ config: capped, client, locks: createMemoryLockManager(), fees: () => readFees(client), accounts: {} });
    expect(await none.signSend(drip())).toMatchObject({ ok: false, error: { code: 'no_account' } });
    sender.close();
  });

  test('an account without gas is insufficient_funds before anything is signed; a token balance below the amount is simulation_reverted', async () => {
    const { faucet, sender } = await newFaucet({ gas: false });
    expect(await sender.signSend(drip())).toMatchObject({ ok: false, error: { code: 'insufficient_funds' } });
    await fund(faucet.address);
    expect(await sender.signSend(drip({ amount: '100000000' }))).toMatchObject({ ok: true });
    sender.close();
    const poor = await newFaucet({ aUSD: 0n });
    expect(await poor.sender.signSend(drip())).toMatchObject({ ok: false, error: { code: 'simulation_reverted' } });
    expect(await poor.sender.simulateSend(drip())).toMatchObject({ ok: false, error: { code: 'simulation_reverted' } });
    expect(await chainNonce(poor.faucet.address)).toBe(0);
    poor.sender.close();
  });
});
