import { ExecutionRequestSchema, type ExecutionRequest } from '../api/v1alpha1/index.ts';
import { ArchiveError, InclusionMarkSchema, type InclusionMark } from './types.ts';

/** Parses what the archive held; an entry that is not an ExecutionRequest is an error, never a 404. */
export function parseArchived(json: string, what: string): ExecutionRequest {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (cause) {
    throw new ArchiveError('Corrupt', `archived ${what} is not JSON`, { cause });
  }
  const parsed = ExecutionRequestSchema.safeParse(raw);
  if (!parsed.success) throw new ArchiveError('Corrupt', `archived ${what} is not an ExecutionRequest`, { cause: parsed.error });
  return parsed.data;
}

/** Parses an inclusion mark the archive held; one that is not a mark is an error, not an absent mark. */
export function parseInclusionMark(json: string, what: string): InclusionMark {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (cause) {
    throw new ArchiveError('Corrupt', `the inclusion mark ${what} is not JSON`, { cause });
  }
  const parsed = InclusionMarkSchema.safeParse(raw);
  if (!parsed.success) throw new ArchiveError('Corrupt', `the inclusion mark ${what} is not a mark`, { cause: parsed.error });
  return parsed.data;
}
