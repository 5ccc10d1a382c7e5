import { AgentWalletError } from '../lib/errors.ts';

/**
 * - `StartFailed`: a chain's node did not start (anvil's own message is in it);
 * - `ReplayRefused`: a chain's journal holds calls that cannot be replayed as they were answered;
 * - `JournalUnusable`: a chain's journal is corrupt, or does not belong to its snapshot.
 * The last two leave everything on disk as it was and say how to start fresh.
 */
export type DevnetErrorCode = 'StartFailed' | 'ReplayRefused' | 'JournalUnusable';

export class DevnetError extends AgentWalletError<DevnetErrorCode> {
  override readonly name = 'DevnetError';
}
