import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { z } from 'zod';
import { err, ok, type Result } from '../../lib/result.ts';
import { refusal, X402_REASON, type X402Refusal } from './reasons.ts';

export const PAYMENT_SIGNATURE_HEADER = 'PAYMENT-SIGNATURE';

/**
 * An EIP-3009 payload is about 1 KB of base64; a smart-wallet signature wrapped in ERC-6492 (deployment
 * calldata included) a few KB. Anything longer is refused before it is decoded.
 */
export const MAX_PAYMENT_HEADER_LENGTH = 16 * 1024;

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/) as unknown as z.ZodType<`0x${string}`>;
const Bytes32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/) as unknown as z.ZodType<`0x${string}`>;
const Signature = z.string().regex(/^0x([0-9a-fA-F]{2})+$/) as unknown as z.ZodType<`0x${string}`>;
/** uint256 as a decimal string, as x402 encodes amounts and times. */
const Uint256 = z.string().regex(/^(0|[1-9][0-9]{0,77})$/);

const RequirementsSchema = z.looseObject({
  scheme: z.string(),
  network: z.string().regex(/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/) as unknown as z.ZodType<`${string}:${string}`>,
  asset: z.string(),
  amount: z.string(),
  payTo: z.string(),
  maxTimeoutSeconds: z.number(),
  extra: z.record(z.string(), z.unknown()),
});

const AuthorizationSchema = z.object({
  from: Address,
  to: Address,
  value: Uint256,
  validAfter: Uint256,
  validBefore: Uint256,
  nonce: Bytes32,
});
export type Eip3009Authorization = z.infer<typeof AuthorizationSchema>;

/** x402 v2 PaymentPayload of the `exact` scheme with an EIP-3009 authorization (the only kind offered). */
const PaymentSchema = z.looseObject({
  x402Version: z.literal(2),
  resource: z.looseObject({ url: z.string() }).optional(),
  accepted: RequirementsSchema,
  payload: z.object({ signature: Signature, authorization: AuthorizationSchema }),
  extensions: z.record(z.string(), z.unknown()).optional(),
});

/** A decoded PAYMENT-SIGNATURE: the requirement the client says it accepted, and what it signed. */
export interface X402Payment {
  /** As received, for the facilitator (which checks the signature against it). */
  payload: PaymentPayload;
  accepted: PaymentRequirements;
  authorization: Eip3009Authorization;
  signature: `0x${string}`;
}

/**
 * Decodes a PAYMENT-SIGNATURE header (base64 JSON, x402 v2). Refusals: `invalid_payload` when it is not an x402
 * payment with an EIP-3009 payload, `invalid_x402_version` for another version (v1's `X-PAYMENT` is not
 * accepted: a v1 client learns requirements from the 402 body, and this service's 402 body is its own).
 */
export function decodePaymentSignature(header: string): Result<X402Payment, X402Refusal> {
  if (header.length > MAX_PAYMENT_HEADER_LENGTH) {
    return err(refusal(X402_REASON.invalidPayload, `${PAYMENT_SIGNATURE_HEADER} is longer than ${MAX_PAYMENT_HEADER_LENGTH} characters`));
  }
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(header.trim())) {
    return err(refusal(X402_REASON.invalidPayload, `${PAYMENT_SIGNATURE_HEADER} is not base64`));
  }
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(header.trim(), 'base64').toString('utf8'));
  } catch {
    return err(refusal(X402_REASON.invalidPayload, `${PAYMENT_SIGNATURE_HEADER} is not base64 of JSON`));
  }
  const version = (json as { x402Version?: unknown } | null)?.x402Version;
  if (typeof version === 'number' && version !== 2) {
    return err(refusal(X402_REASON.invalidX402Version, `x402Version ${version} is not supported; use 2`));
  }
  const parsed = PaymentSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'payment';
    return err(refusal(X402_REASON.invalidPayload, `not an x402 v2 exact EIP-3009 payment: ${where}: ${issue?.message ?? 'invalid'}`));
  }
  const p = parsed.data;
  return ok({
    payload: p as PaymentPayload,
    accepted: p.accepted as PaymentRequirements,
    authorization: p.payload.authorization,
    signature: p.payload.signature,
  });
}
