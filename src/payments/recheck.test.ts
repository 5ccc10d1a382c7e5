import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { newPayer } from '../../test/support/payer.ts';
import { testDevnet } from '../../test/support/env.ts';
import type { PaymentQuote, PaymentRecord } from '../api/v1alpha1/index.ts';
import { chainUnderTest, freshSecret } from '../../test/support/chainUnderTest.ts';
import { createChainWorker, type LocalChainWorker } from '../chain/worker/index.ts';
import { recheckPayment } from './recheck.ts';

/** A payment verified earlier, checked again against the devnet's chain: real transfers, the real worker's receipts. */
describe('recheckPayment', () => {
  const env = chainUnderTest('base');
  let worker: LocalChainWorker;
  let paid: PaymentRecord;
  let quote: PaymentQuote;

  beforeAll(async () => {
    worker = await createChainWorker(env.config, { serviceSecret: freshSecret() });
    const payer = await newPayer(testDevnet(), 'base');
    const token = env.config.tokens.find((t) => t.symbol === 'aUSD')!;
    const txHash = await payer.pay('aUSD', env.config.treasury, 1_234_567n);
    quote = {
      amountUsd: 1.234567,
      gasCostUsd: 1,
      feeUsd: 0.234567,
      chainId: env.config.chainId,
      recipient: env.config.treasury,
      tokens: [{ symbol: 'aUSD', address: token.address, decimals: 6, amountRaw: '1234567' }],
      expiresAt: new Date(Date.now() + 600_000).toISOString(),
    };
    paid = { method: 'proof', token: 'aUSD', amountRaw: '1234567', payer: payer.address, txHash, logIndex: 0 };
  });
  afterAll(async () => {
    await worker?.close();
  });

  it('holds a transfer still on chain that moves what was verified', async () => {
    expect(await recheckPayment(paid, quote, worker, 1)).toEqual({ kind: 'held' });
  });

  it('is not final while the transfer is shallower than the chain requires', async () => {
    expect(await recheckPayment(paid, quote, worker, 1_000)).toMatchObject({ kind: 'not_final', message: expect.stringContaining('of 1000 confirmations') });
  });

  it('is lost when the transaction is gone, or no longer moves the verified amount to the treasury', async () => {
    const gone = { ...paid, txHash: `0x${'77'.repeat(32)}` as Hex };
    expect(await recheckPayment(gone, quote, worker, 1)).toMatchObject({ kind: 'lost', message: expect.stringContaining('no longer on chain') });
    expect(await recheckPayment({ ...paid, amountRaw: '1234568' }, quote, worker, 1)).toMatchObject({ kind: 'lost', message: expect.stringContaining('not the 1234568 verified') });
    const elsewhere = { ...quote, recipient: `0x${'12'.repeat(20)}` as Address };
    expect(await recheckPayment(paid, elsewhere, worker, 1)).toMatchObject({ kind: 'lost' });
  });

  it('holds what rides in the operation itself (auto), and nothing paid at all', async () => {
    const auto: PaymentRecord = { method: 'auto', token: 'aUSD', amountRaw: '1', payer: paid.payer };
    expect(await recheckPayment(auto, quote, worker, 1)).toEqual({ kind: 'held' });
    expect(await recheckPayment(undefined, undefined, worker, 1)).toEqual({ kind: 'held' });
  });
});
