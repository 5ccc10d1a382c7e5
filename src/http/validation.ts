import { FIELD_ERROR_CODES, REQUIRED, SHAPE_ERROR_CODE, type ErrorBody } from '../api/http/index.ts';

/**
 * A schema validation failure (fastify-type-provider-zod's issues) as the API's 400 body: the first issue in
 * `error`/`field`/`message`, every issue in `issues`, field names as the caller wrote them.
 */

interface ValidationIssue {
  /** The zod issue code (`invalid_type`, `invalid_union`, `custom`...). */
  keyword?: string;
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** A zod issue as it appears inside an `invalid_union` issue (paths relative to the union). */
interface NestedIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
  [key: string]: unknown;
}

/** The API's headers as its docs spell them (Node gives them lowercased). */
const HEADER_DISPLAY_NAMES: Readonly<Record<string, string>> = {
  'idempotency-key': 'Idempotency-Key',
  'x-payment-proof': 'X-Payment-Proof',
  'payment-signature': 'PAYMENT-SIGNATURE',
  prefer: 'Prefer',
  'if-none-match': 'If-None-Match',
};

/** `/batch_calls/2/calldata` → `batch_calls[2].calldata`; the whole part (empty path) → `body`, `query`… */
function fieldName(instancePath: string, context: string | undefined): string {
  const segments = instancePath.split('/').filter((s) => s !== '');
  if (segments.length === 0) return context === 'querystring' ? 'query' : (context ?? 'body');
  if (context === 'headers') return HEADER_DISPLAY_NAMES[segments[0]!] ?? segments[0]!;
  return segments.reduce((acc, s) => (/^\d+$/.test(s) ? `${acc}[${s}]` : acc === '' ? s : `${acc}.${s}`), '');
}

function issueCode(issue: ValidationIssue, instancePath: string): string {
  const explicit = (issue.params?.['params'] as { code?: unknown } | undefined)?.code;
  if (typeof explicit === 'string') return explicit;
  if (issue.message === REQUIRED || issue.message?.startsWith(`${REQUIRED} `)) return 'missing_field';
  const last = instancePath.split('/').filter((s) => s !== '' && !/^\d+$/.test(s)).pop();
  return (last && FIELD_ERROR_CODES[last]) || 'invalid_request';
}

/** The issue of a field that must be absent (`z.never()` in src/api/http/execution.ts): the caller used another shape. */
const isAbsentFieldIssue = (issue: ValidationIssue): boolean =>
  issue.params?.['expected'] === 'never';

function nested(unionPath: string, issue: NestedIssue): ValidationIssue {
  const { code, path, message, ...params } = issue;
  const suffix = path.map(String).join('/');
  return {
    instancePath: suffix === '' ? unionPath : `${unionPath === '/' ? '' : unionPath}/${suffix}`,
    keyword: code,
    message,
    params,
  };
}

/**
 * A value that matched no alternative of a union (the two body shapes of POST /execute) fails with one
 * `invalid_union` issue that holds each alternative's issues. The caller meant the alternative none of whose
 * fields-that-must-be-absent are present: its issues are the answer. If every alternative has such a field,
 * the value mixes them: one `invalid_request_shape` issue (the union's message), plus the issues of the fields
 * that are present (not the "is required" ones, which would only mislead).
 */
function expandUnion(issue: ValidationIssue): ValidationIssue[] {
  const branches = issue.params?.['errors'];
  if (issue.keyword !== 'invalid_union' || !Array.isArray(branches) || branches.length === 0) return [issue];
  const alternatives = (branches as NestedIssue[][]).map((b) => b.map((i) => nested(issue.instancePath, i)));
  const meant = alternatives.find((issues) => !issues.some(isAbsentFieldIssue));
  if (meant) return meant.flatMap(expandUnion);
  const seen = new Set<string>();
  const present = alternatives
    .flat()
    .filter((i) => !isAbsentFieldIssue(i) && issueCode(i, i.instancePath) !== 'missing_field')
    .filter((i) => {
      const key = `${i.instancePath}\u0000${i.message}`;
      return seen.has(key) ? false : (seen.add(key), true);
    });
  const shape: ValidationIssue = {
    keyword: 'custom',
    instancePath: issue.instancePath,
    message: issue.message,
    params: { params: { code: SHAPE_ERROR_CODE } },
  };
  return [shape, ...present.flatMap(expandUnion)];
}

/** What Fastify hands the error handler for a request that failed its route's schema. */
export interface ValidationFailure {
  validation: ValidationIssue[];
  /** The part of the request that failed: body, querystring, params or headers. */
  validationContext?: string;
}

export function validationBody(error: ValidationFailure): ErrorBody {
  const issues = error.validation.flatMap(expandUnion).map((issue) => {
    const field = fieldName(issue.instancePath, error.validationContext);
    const message = `${field} ${issue.message ?? 'is invalid'}`;
    return { field, code: issueCode(issue, issue.instancePath), message, absent: isAbsentFieldIssue(issue) };
  });
  // A body of the wrong shape explains the other issues better than any of them, and so does a field that
  // must not be there at all (batch_calls on /simulate): report them first.
  const first =
    issues.find((i) => i.code === SHAPE_ERROR_CODE) ?? issues.find((i) => i.absent) ?? issues[0]!;
  return {
    error: first.code,
    message: first.message,
    field: first.field,
    issues: issues.map(({ field, code, message }) => ({ field, code, message })),
  };
}

