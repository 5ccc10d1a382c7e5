import { z } from 'zod';
import type { ExecutionRequest } from '../api/v1alpha1/index.ts';
import { ChainNameSchema } from '../config/chains.ts';
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
  /**
   * Records the newest inclusion archived on a chain (retention writes it with each newer one). Archived requests
   * are not looked up again; this one stands for them: a chain that no longer has it lost what they say.
   */
  putInclusionMark(mark: InclusionMark, namespace?: string): Promise<void>;
  /** The newest inclusion archived on `chain`, or undefined (none yet, or expired with the archive). */
  inclusionMark(chain: InclusionMark['chain'], namespace?: string): Promise<InclusionMark | undefined>;
  close(): Promise<void>;
}

/** The newest inclusion archived on a chain (by completion): which request, its transaction and block. */
export const InclusionMarkSchema = z.object({
  chain: ChainNameSchema,
  request: z.string(),
  /** When the request completed: a newer one replaces the mark, even at a lower block (after a chain reset). */
  completionTime: z.string(),
  txHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
  blockNumber: z.string().regex(/^(0|[1-9][0-9]*)$/),
  blockHash: z.string().regex(/^0x[0-9a-fA-F]{64}$/).optional(),
});
export type InclusionMark = z.infer<typeof InclusionMarkSchema>;

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
