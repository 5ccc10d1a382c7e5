import type { PaymentRequirements } from '@x402/core/types';
import { err, ok, type Result } from '../../lib/result.ts';
import type { X402Payment } from './payment.ts';
import { refusal, X402_REASON, type X402Refusal } from './reasons.ts';

const sameAddress = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/**
 * What the accepted requirement says otherwise than the offer: what moves, where, how much, and every `extra`
 * the offer set (the EIP-712 domain signed over, the transfer method, the request it pays for), as x402's own
 * resource server compares them. The client may add `extra` keys of its own.
 */
function differences(accepted: PaymentRequirements, offer: PaymentRequirements): string[] {
  const diffs: string[] = [];
  if (!sameAddress(accepted.asset, offer.asset)) diffs.push(`asset ${accepted.asset} (offered ${offer.asset})`);
  if (!sameAddress(accepted.payTo, offer.payTo)) diffs.push(`payTo ${accepted.payTo} (offered ${offer.payTo})`);
  if (accepted.amount !== offer.amount) diffs.push(`amount ${accepted.amount} (offered ${offer.amount})`);
  for (const [key, offered] of Object.entries(offer.extra)) {
    if (accepted.extra?.[key] !== offered) diffs.push(`extra.${key} ${String(accepted.extra?.[key])} (offered ${String(offered)})`);
  }
  return diffs;
}

/**
 * The offered requirement the payment accepted, compared exactly on scheme, network, asset, payTo, amount and
 * `extra` (addresses case-insensitively). This is the service's check that the client pays what was quoted,
 * for the request it was quoted for; the facilitator then checks that the signed authorization says the same
 * (`to`, `value`), and the claim (authorizationClaimName) that no other request was served by it.
 */
export function matchOffer(payment: X402Payment, offers: readonly PaymentRequirements[]): Result<PaymentRequirements, X402Refusal> {
  const { accepted } = payment;
  if (accepted.scheme !== 'exact') return err(refusal(X402_REASON.invalidScheme, `scheme ${accepted.scheme} is not offered; use exact`));
  const onNetwork = offers.filter((o) => o.scheme === 'exact' && o.network === accepted.network);
  if (onNetwork.length === 0) {
    const networks = [...new Set(offers.map((o) => o.network))].join(', ');
    return err(refusal(X402_REASON.invalidNetwork, `nothing is offered on ${accepted.network}; offered: ${networks}`));
  }
  const match = onNetwork.find((o) => differences(accepted, o).length === 0);
  if (match) return ok(match);
  // Name the differences from the offer of the same token when there is one: that is the likely intent.
  const closest = onNetwork.find((o) => sameAddress(o.asset, accepted.asset)) ?? onNetwork[0]!;
  return err(refusal(X402_REASON.invalidPaymentRequirements, `the payment accepted what was not offered: ${differences(accepted, closest).join('; ')}`));
}
