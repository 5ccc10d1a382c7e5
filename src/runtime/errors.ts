import { AgentWalletError } from '../lib/errors.ts';

/**
 * Thrown by a reconciler for a condition no retry can fix (invalid spec, a permanent refusal): the
 * controller logs it and does not requeue the key. Anything else thrown is retried with backoff.
 */
export class TerminalError extends AgentWalletError<'Terminal'> {
  override readonly name = 'TerminalError';

  constructor(message: string, opts: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super('Terminal', message, opts);
  }
}

export const isTerminalError = (e: unknown): e is TerminalError => e instanceof TerminalError;
