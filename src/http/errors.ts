import { AgentWalletError } from '../lib/errors.ts';
import type { ErrorBody } from '../api/http/index.ts';

/**
 * Every error body is `{ error: <code>, message: <human text>, ...details }` (ErrorBodySchema in src/api/http).
 * `error` is a stable snake_case code a client can match on (except the two authentication texts fixed by spec
 * §5.6); `message` is for people; details (e.g. `field`, `request_id`, `retry_after_seconds`) use snake_case like
 * the rest of the API.
 */

/** An error an app answers on purpose: its status, code, message and details reach the client as-is. */
export class HttpError extends AgentWalletError<string> {
  override readonly name: string = 'HttpError';
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    statusCode: number,
    code: string,
    message: string,
    opts: { details?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(code, message, { details: opts.details, cause: opts.cause });
    this.statusCode = statusCode;
    this.headers = opts.headers ?? {};
  }

  body(): ErrorBody {
    return { error: this.code, message: this.shortMessage, ...this.details };
  }
}

/** A 400 naming the offending field, shaped exactly like a schema validation error. */
export function fieldError(code: string, field: string, message: string): HttpError {
  return new HttpError(400, code, `${field} ${message}`, {
    details: { field, issues: [{ field, code, message: `${field} ${message}` }] },
  });
}
