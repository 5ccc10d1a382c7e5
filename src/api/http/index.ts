/**
 * The HTTP API's contract (spec §2 and §4), one file per resource: the zod schemas the gateway validates and
 * serializes with and publishes in /openapi.json, and that the typed client (src/client) parses answers with.
 */
export * from './common.ts';
export * from './errors.ts';
export * from './wallet.ts';
export * from './execution.ts';
export * from './status.ts';
export * from './feed.ts';
export * from './health.ts';
export * from './policy.ts';
