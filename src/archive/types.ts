import type { ExecutionRequest } from '../api/v1alpha1/index.ts';
import { AgentWalletError } from '../lib/errors.ts';
import { DEFAULT_NAMESPACE, invalidNamespace, invalidObjectName } from '../api/v1alpha1/names.ts';

/**
 * Where finished ExecutionRequests go before the retention controller deletes them, so `GET /status/:id`
 * keeps answering. It stores the request whole: the status renders exactly as it did from the store.
 *
 * Two backends: Redis in the cluster (archive/redis.ts), files in embedded mode (archive/files.ts).
 */
export interface ExecutionArchive {
  /** Stores (or replaces) the request under its namespace and name; durable when it resolves. */
  put(req: ExecutionRequest): Promise<void>;
  /** The archived request, or undefined (never archived, expired, or a name that cannot exist). */
  get(name: string, namespace?: string): Promise<ExecutionRequest | undefined>;
  close(): Promise<void>;
}

/** `Unavailable`: the backend did not answer (retry later; the gateway answers 503 as for the store). */
export type ArchiveErrorCode = 'Invalid' | 'Corrupt' | 'Unavailable';

export class ArchiveError extends AgentWalletError<ArchiveErrorCode> {
  override readonly name = 'ArchiveError';
}

/** Names and namespaces that a stored object can have; anything else is refused before it meets a key or a path. */
export function validArchiveName(name: string, namespace: string): boolean {
  return invalidObjectName(name) === undefined && invalidNamespace(namespace) === undefined;
}

export { DEFAULT_NAMESPACE };
/** How long an archived request stays readable unless configured otherwise: 30 days. */
export const DEFAULT_ARCHIVE_RETENTION_MS = 30 * 24 * 3_600_000;
