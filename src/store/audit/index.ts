export { auditedStore, AUDITED_KINDS } from './auditedStore.ts';
export { fileAuditLog, type AuditLog, type AuditRecord } from './log.ts';

/** Where the embedded service's audit log is, in its data directory. */
export const auditLogPath = (dataDir: string): string => `${dataDir}/audit.jsonl`;
