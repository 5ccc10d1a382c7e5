import type { PaymentRequired, PaymentVerificationFailed } from '../api/http/index.ts';

/**
 * An answer of the API that is not a success, as a value: the HTTP status, the body's `error` code and
 * message, and the whole body. A 402 also carries its quote (spec 2.8), typed, so the caller knows what to pay.
 * `status` 0: no answer at all (the connection failed), with `cause`.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown> = {},
    readonly retryAfterSeconds?: number,
    options?: { cause?: unknown; paymentRequiredHeader?: string | undefined },
  ) {
    super(message, options);
    this.paymentRequiredHeader = options?.paymentRequiredHeader;
  }

  /** A 402's x402 offer (the PAYMENT-REQUIRED header, base64 JSON) where the deployment settles x402. */
  readonly paymentRequiredHeader: string | undefined;

  /** The quote of a 402 (payment_required, or payment_verification_failed with the quote still to pay). */
  get payment(): PaymentRequired | PaymentVerificationFailed | undefined {
    return this.status === 402 ? (this.body as unknown as PaymentRequired | PaymentVerificationFailed) : undefined;
  }

  /** No answer: the request may or may not have reached the service. */
  get unanswered(): boolean {
    return this.status === 0;
  }
}

/** The API's error body (spec 7; docs/api.md): `error` and `message`, or 401's plain `error` text. */
export async function apiErrorOf(res: Response): Promise<ApiError> {
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') body = parsed as Record<string, unknown>;
  } catch {
    body = { error: 'unreadable_answer', message: text.slice(0, 200) };
  }
  const code = typeof body.error === 'string' ? body.error : `http_${res.status}`;
  const message = typeof body.message === 'string' ? body.message : code;
  const retryAfter = Number(res.headers.get('retry-after'));
  return new ApiError(res.status, code, message, body, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined, {
    paymentRequiredHeader: res.headers.get('payment-required') ?? undefined,
  });
}
