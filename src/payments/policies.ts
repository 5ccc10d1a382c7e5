import type { PaymentQuote } from '../api/v1alpha1/index.ts';
import type { ChainName } from '../config/chains.ts';
import type { Logger } from '../lib/logger.ts';
import type { ResourceStore } from '../store/types.ts';
import { autoTransferCall, chooseAutoToken } from './auto.ts';
import { payWithCredit } from './credit.ts';
import { makeQuote } from './quote.ts';
import { recheckPayment } from './recheck.ts';
import { withUniqueAmounts } from './uniqueAmounts.ts';
import type { Admission, ChainPaymentTerms, PaymentContext, PaymentPolicies, PaymentPolicy, PaymentSettings } from './types.ts';
import { createPaymentVerifier } from './verify.ts';
import type { X402Facilitator } from './x402/index.ts';

export interface PaymentPoliciesDeps {
  store: ResourceStore;
  namespace: string;
  /** Each served chain's payment terms (treasury, accepted tokens, native price, confirmations). */
  terms: ReadonlyMap<ChainName, ChainPaymentTerms>;
  settings: PaymentSettings;
  /** The in-process x402 facilitator, where this deployment settles x402 payments. */
  x402?: X402Facilitator | undefined;
  logger: Logger;
}


/**
 * The three payment modes of spec §2.6, built with what they need: the store (to claim payments), each chain's
 * terms, the pricing settings and the x402 facilitator. One set per controller; the gateway prices with the same
 * modules (pricing.ts, quote.ts) but decides nothing.
 */
export function createPaymentPolicies(deps: PaymentPoliciesDeps): PaymentPolicies {
  const termsOf = (chain: ChainName): ChainPaymentTerms => {
    const t = deps.terms.get(chain);
    if (!t) throw new Error(`no payment terms for chain ${chain}`);
    return t;
  };
  const verifier = createPaymentVerifier({
    store: deps.store,
    namespace: deps.namespace,
    terms: termsOf,
    x402: deps.x402,
    serviceAccounts: deps.settings.serviceAccounts,
    logger: deps.logger,
  });
  // Priced on pricedGas(): the auto mode's quote includes its transfer's gas (AUTO_TRANSFER_GAS).
  const quoteFor = (ctx: Parameters<PaymentPolicy['admit']>[0]) =>
    makeQuote({
      mode: ctx.request.spec.paymentMode,
      simulation: ctx.simulation,
      terms: termsOf(ctx.request.spec.chain),
      settings: deps.settings,
      platformFeeUsd: ctx.request.spec.platformFeeUsd,
      now: ctx.now,
    });
  const hasPayment = (ctx: PaymentContext): boolean =>
    ctx.request.spec.paymentProof !== undefined || ctx.request.spec.x402Payment !== undefined;

  /**
   * The quote a 402 answers with: amounts no other open quote holds, held until the quote's grace ends, and the
   * chain's head, after which a transfer made for it must be mined. Refused when no free amount is found.
   */
  async function payable(ctx: PaymentContext, quote: PaymentQuote): Promise<Admission> {
    const chain = ctx.request.spec.chain;
    const head = await ctx.worker.getHead();
    const unique = withUniqueAmounts(quote, (token) => ctx.amounts.held(chain, token, ctx.now));
    if (!unique) {
      return { kind: 'refused', failure: { code: 'payments_busy', message: `too many quotes are open on ${chain} to give this one an amount of its own; send the request again` } };
    }
    const held: PaymentQuote = {
      ...unique,
      fromBlock: head.blockNumber.toString(),
      reservedUntil: new Date(Date.parse(quote.expiresAt) + deps.settings.graceSeconds * 1000).toISOString(),
    };
    ctx.amounts.hold(chain, held);
    return { kind: 'required', quote: held };
  }

  /** The request paid by a credit its key and agent have (a paid request that never executed), if one covers it. */
  const credited = (ctx: PaymentContext, quote: PaymentQuote): Promise<Admission | undefined> =>
    payWithCredit(deps.store, deps.namespace, ctx.request, quote, ctx.credits ?? [], ctx.now);

  /** A payment that came with the request itself (paid before the first 402): judged against a fresh quote. */
  async function admitAttached(ctx: PaymentContext, required: Admission): Promise<Admission> {
    if (required.kind !== 'required') return required;
    const verdict = await verifier.verify(ctx.request, ctx.worker, [required.quote], ctx.now);
    if (verdict.kind === 'verified') return { kind: 'verified', quote: verdict.quote ?? required.quote, paid: verdict.paid };
    if (verdict.kind === 'rejected') return { ...required, rejection: verdict.rejection };
    return required; // a quote just made cannot have expired
  }

  const verify: PaymentPolicy['verify'] = (ctx, quotes) => verifier.verify(ctx.request, ctx.worker, quotes, ctx.now);
  const recheck: PaymentPolicy['recheck'] = (ctx, paid) =>
    recheckPayment(paid, ctx.request.status?.payment?.quote, ctx.worker, termsOf(ctx.request.spec.chain).paymentConfirmations);

  const manual: PaymentPolicy = {
    mode: 'manual',
    async admit(ctx) {
      if (hasPayment(ctx)) return admitAttached(ctx, await payable(ctx, quoteFor(ctx)));
      const quote = quoteFor(ctx);
      return (await credited(ctx, quote)) ?? payable(ctx, quote);
    },
    verify,
    recheck,
    required: (ctx) => payable(ctx, quoteFor(ctx)),
  };

  const auto: PaymentPolicy = {
    mode: 'auto',
    /**
     * The transfer travels in the same UserOperation as the calls, after them: atomic, so no payment moves
     * without its execution (a reverted operation reverts the transfer too) and it moves once (the operation's
     * nonce). No covering token: the 402 lets the caller pay by hand, as in the manual mode.
     */
    async admit(ctx) {
      const quote = quoteFor(ctx);
      if (hasPayment(ctx)) return admitAttached(ctx, await payable(ctx, quote));
      if (quote.amountUsd === 0) return { kind: 'satisfied', reason: 'NothingToPay', costUsd: 0, quote };
      const byCredit = await credited(ctx, quote);
      if (byCredit) return byCredit;
      const token = await chooseAutoToken(ctx.worker, ctx.simulation.wallet.address, quote, ctx.feesInFlight);
      if (!token) return payable(ctx, quote);
      return {
        kind: 'satisfied',
        reason: 'AutoTransfer',
        costUsd: quote.amountUsd,
        calls: [autoTransferCall(token, quote.recipient)],
        quote,
        paid: { method: 'auto', token: token.symbol, amountRaw: token.amountRaw, payer: ctx.simulation.wallet.address },
      };
    },
    verify,
    recheck,
    // The wallet cannot cover its fee after all: pay by hand, as in the manual mode (a 402).
    required: (ctx) => payable(ctx, quoteFor(ctx)),
  };

  const sponsored: PaymentPolicy = {
    mode: 'sponsored',
    admit: async () => ({ kind: 'satisfied', reason: 'Sponsored', costUsd: 0 }),
    verify: async () => ({ kind: 'rejected', rejection: { reason: 'not_payable', message: 'a sponsored request takes no payment', retryable: false } }),
    recheck: async () => ({ kind: 'held' }),
    required: async () => ({ kind: 'satisfied', reason: 'Sponsored', costUsd: 0 }),
  };

  return { manual, auto, sponsored };
}
