/**
 * Base of every error this service raises on purpose. `code` is machine-readable and stable (it is what an
 * API client or an operator matches on); `shortMessage` is for humans; `details` may carry context.
 */
export class AgentWalletError<C extends string = string> extends Error {
  override readonly name: string = 'AgentWalletError';
  readonly code: C;
  readonly shortMessage: string;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: C, shortMessage: string, opts: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(shortMessage, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.shortMessage = shortMessage;
    this.details = opts.details;
  }
}
