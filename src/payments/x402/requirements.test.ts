import { decodePaymentRequiredHeader } from '@x402/core/http';
import { parsePaymentRequired } from '@x402/core/schemas';
import { describe, expect, test } from 'vitest';
import { paymentRequiredHeader, paymentRequirements, type X402Quote } from './requirements.ts';

const quote: X402Quote = {
  chainId: 84532,
  payTo: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
  resourceUrl: 'http://127.0.0.1:8080/execute',
  description: 'execution 01JD…',
  tokens: [
    { symbol: 'USDC', address: '0x403da53d6198b01028da0c450477cbcf2a787504', amountRaw: '1234567', eip712: { name: 'USD Coin (agent-wallet test)', version: '2' } },
    { symbol: 'aUSD', address: '0xE60dC03DB2efE82e607dFAc0e9a8b4BD7b0Bc1a5', amountRaw: '1234567', eip712: { name: 'Agent USD (agent-wallet test)', version: '2' } },
  ],
  maxTimeoutSeconds: 300,
  requestId: 'req-1',
};

describe('PAYMENT-REQUIRED', () => {
  test('one exact EIP-3009 entry per token on eip155:<chainId>, checksummed addresses, the raw amount', () => {
    expect(paymentRequirements(quote)).toEqual([
      {
        scheme: 'exact',
        network: 'eip155:84532',
        asset: '0x403dA53D6198B01028da0C450477cbCf2A787504',
        amount: '1234567',
        payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        maxTimeoutSeconds: 300,
        extra: { name: 'USD Coin (agent-wallet test)', version: '2', assetTransferMethod: 'eip3009', request_id: 'req-1' },
      },
      expect.objectContaining({ asset: '0xE60dC03DB2efE82e607dFAc0e9a8b4BD7b0Bc1a5', extra: expect.objectContaining({ name: 'Agent USD (agent-wallet test)' }) }),
    ]);
  });

  test('the header is base64 JSON that x402 itself parses as a v2 PaymentRequired', () => {
    const header = paymentRequiredHeader(quote, 'invalid_exact_evm_nonce_already_used');
    expect(header).toMatch(/^[A-Za-z0-9+/]+=*$/);
    const decoded = decodePaymentRequiredHeader(header);
    expect(parsePaymentRequired(decoded).success).toBe(true);
    expect(decoded).toMatchObject({
      x402Version: 2,
      error: 'invalid_exact_evm_nonce_already_used',
      resource: { url: quote.resourceUrl, description: quote.description, mimeType: 'application/json' },
    });
    expect(decoded.accepts).toHaveLength(2);
    expect('error' in decodePaymentRequiredHeader(paymentRequiredHeader(quote))).toBe(false);
  });

  test('refuses a quote that cannot be paid exactly: no token, a zero or fractional amount, too short a timeout', () => {
    expect(() => paymentRequirements({ ...quote, tokens: [] })).toThrow();
    expect(() => paymentRequirements({ ...quote, tokens: [{ ...quote.tokens[0]!, amountRaw: '0' }] })).toThrow();
    expect(() => paymentRequirements({ ...quote, tokens: [{ ...quote.tokens[0]!, amountRaw: '1.5' }] })).toThrow();
    expect(() => paymentRequirements({ ...quote, maxTimeoutSeconds: 6 })).toThrow();
    expect(() => paymentRequirements({ ...quote, payTo: '0x1234' })).toThrow();
  });
});
