import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import { describe, expect, test } from 'vitest';
import { authorizationClaimName, authorizationIdentity } from './claim.ts';
import { matchOffer } from './match.ts';
import { decodePaymentSignature, MAX_PAYMENT_HEADER_LENGTH, type X402Payment } from './payment.ts';
import { isMalformedPayment } from './reasons.ts';
import { paymentRequirements } from './requirements.ts';
import { invalidObjectName } from '../../api/v1alpha1/names.ts';

const offers = paymentRequirements({
  chainId: 84532,
  payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  resourceUrl: 'http://127.0.0.1:8080/execute',
  tokens: [
    { symbol: 'USDC', address: '0x403dA53D6198B01028da0C450477cbCf2A787504', amountRaw: '1000', eip712: { name: 'USD Coin', version: '2' } },
    { symbol: 'aUSD', address: '0xE60dC03DB2efE82e607dFAc0e9a8b4BD7b0Bc1a5', amountRaw: '1000', eip712: { name: 'Agent USD', version: '2' } },
  ],
  maxTimeoutSeconds: 300,
  requestId: 'req-1',
});
const usdcOffer = offers[0]!;

const signed = (accepted = usdcOffer, overrides: Record<string, unknown> = {}): PaymentPayload => ({
  x402Version: 2,
  resource: { url: 'http://127.0.0.1:8080/execute' },
  accepted,
  payload: {
    signature: `0x${'ab'.repeat(65)}`,
    authorization: {
      from: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
      to: accepted.payTo,
      value: accepted.amount,
      validAfter: '0',
      validBefore: '1900000000',
      nonce: `0x${'0F'.repeat(32)}`,
    },
    ...overrides,
  },
});

const decoded = (payload: PaymentPayload): X402Payment => {
  const result = decodePaymentSignature(encodePaymentSignatureHeader(payload));
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
};
const reasonOf = (header: string) => {
  const result = decodePaymentSignature(header);
  return result.ok ? undefined : { reason: result.error.reason, malformed: isMalformedPayment(result.error) };
};
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64');

describe('PAYMENT-SIGNATURE', () => {
  test('decodes what the x402 client encodes', () => {
    const payment = decoded(signed());
    expect(payment.accepted).toEqual(usdcOffer);
    expect(payment.authorization).toMatchObject({ value: '1000', validAfter: '0', nonce: `0x${'0F'.repeat(32)}` });
    expect(payment.signature).toBe(`0x${'ab'.repeat(65)}`);
  });

  test('a header that is not an x402 v2 EIP-3009 payment is malformed (400), with the reason x402 uses', () => {
    expect(reasonOf('not base64!')).toEqual({ reason: 'invalid_payload', malformed: true });
    expect(reasonOf(Buffer.from('{"x402Version":').toString('base64'))).toEqual({ reason: 'invalid_payload', malformed: true });
    expect(reasonOf(b64({ ...signed(), x402Version: 1 }))).toEqual({ reason: 'invalid_x402_version', malformed: true });
    expect(reasonOf(b64({ ...signed(), payload: { permit2Authorization: {} } }))).toEqual({ reason: 'invalid_payload', malformed: true });
    expect(reasonOf(b64(signed(usdcOffer, { signature: '0x12345' })))).toEqual({ reason: 'invalid_payload', malformed: true });
    const badValue = signed();
    (badValue.payload.authorization as Record<string, unknown>).value = '-5';
    expect(reasonOf(b64(badValue))).toEqual({ reason: 'invalid_payload', malformed: true });
    expect(reasonOf('A'.repeat(MAX_PAYMENT_HEADER_LENGTH + 4))).toEqual({ reason: 'invalid_payload', malformed: true });
  });
});

describe('matchOffer', () => {
  test('finds the offer the payment accepted, addresses compared case-insensitively, extra keys of the client ignored', () => {
    const lower = { ...offers[1]!, asset: offers[1]!.asset.toLowerCase(), payTo: offers[1]!.payTo.toLowerCase(), extra: { ...offers[1]!.extra, note: 'mine' } };
    const matched = matchOffer(decoded(signed(lower)), offers);
    expect(matched).toEqual({ ok: true, value: offers[1] });
    expect(matchOffer(decoded(signed(usdcOffer)), offers)).toEqual({ ok: true, value: usdcOffer });
  });

  test('refuses other terms, naming what differs; none of these is malformed', () => {
    const refused = (accepted: typeof usdcOffer) => {
      const result = matchOffer(decoded(signed(accepted)), offers);
      if (result.ok) throw new Error('matched');
      expect(isMalformedPayment(result.error)).toBe(false);
      expect(result.error.retryable).toBe(false);
      return { reason: result.error.reason, message: result.error.message };
    };
    expect(refused({ ...usdcOffer, amount: '999' })).toEqual({ reason: 'invalid_payment_requirements', message: expect.stringContaining('amount 999 (offered 1000)') });
    expect(refused({ ...usdcOffer, payTo: '0x0000000000000000000000000000000000000001' }).message).toContain('payTo 0x0000000000000000000000000000000000000001');
    expect(refused({ ...usdcOffer, asset: '0x0000000000000000000000000000000000000002' }).message).toContain('asset 0x0000000000000000000000000000000000000002');
    expect(refused({ ...usdcOffer, extra: { ...usdcOffer.extra, version: '1' } }).message).toContain('extra.version 1 (offered 2)');
    expect(refused({ ...usdcOffer, extra: { ...usdcOffer.extra, request_id: 'req-2' } }).message).toContain('extra.request_id req-2 (offered req-1)');
    expect(refused({ ...usdcOffer, extra: { name: 'USD Coin', version: '2' } }).message).toContain('extra.assetTransferMethod undefined (offered eip3009)');
    expect(refused({ ...usdcOffer, network: 'eip155:11155111' })).toEqual({ reason: 'invalid_network', message: expect.stringContaining('eip155:84532') });
    expect(refused({ ...usdcOffer, scheme: 'upto' }).reason).toBe('invalid_scheme');
  });
});

describe('the claim of an authorization', () => {
  test('is named by (chainId, asset, from, nonce) alone, whatever the case, as a valid object name', () => {
    const a = decoded(signed());
    const id = authorizationIdentity(a, usdcOffer);
    expect(id).toEqual({
      chainId: 84532,
      asset: '0x403dA53D6198B01028da0C450477cbCf2A787504',
      from: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
      nonce: `0x${'0f'.repeat(32)}`,
    });
    const name = authorizationClaimName(id);
    expect(name).toBe(`x402-84532-403da53d6198b01028da0c450477cbcf2a787504-3c44cdddb6a900fa2b585dd299e03d12fa4293bc-${'0f'.repeat(32)}`);
    expect(invalidObjectName(name)).toBeUndefined();

    // Another signature or validity window over the same nonce is the same authorization.
    const resigned = decoded(signed(usdcOffer, { signature: `0x${'cd'.repeat(65)}` }));
    expect(authorizationClaimName(authorizationIdentity(resigned, usdcOffer))).toBe(name);
    // Each part of the identity tells claims apart.
    expect(authorizationClaimName({ ...id, chainId: 421614 })).not.toBe(name);
    expect(authorizationClaimName({ ...id, asset: offers[1]!.asset as `0x${string}` })).not.toBe(name);
    expect(authorizationClaimName({ ...id, from: '0x90F79bf6EB2c4f870365E785982E1f101E93b906' })).not.toBe(name);
    expect(authorizationClaimName({ ...id, nonce: `0x${'10'.repeat(32)}` })).not.toBe(name);
  });
});
