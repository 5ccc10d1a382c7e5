import { openPrivateFile } from '../../lib/privateFs.ts';
import type { AnyResource } from '../../api/v1alpha1/index.ts';

/** One change of an audited object: who, when, what it was and what it became (null: absent). */
export interface AuditRecord {
  time: string;
  /** Who, as the channel knows them: `alice@host (admin socket)`, `alice@host (cli --data-dir)`. */
  actor: string;
  verb: 'create' | 'update' | 'update-status' | 'delete';
  kind: string;
  namespace: string;
  name: string;
  from: AnyResource | null;
  to: AnyResource | null;
}

export interface AuditLog {
  append(record: AuditRecord): Promise<void>;
}

/**
 * An append-only JSON-lines file (private to the service's user), each record on disk (fdatasync) before the write
 * is answered. An API key's stored hash is shortened: the log says that it changed, not what it is.
 */
export function fileAuditLog(path: string): AuditLog {
  let tail: Promise<void> = Promise.resolve();
  return {
    append(record) {
      const line = `${JSON.stringify(redacted(record))}\n`;
      // One write at a time: lines never interleave, and each is durable before the next starts.
      const done = tail.then(async () => {
        const file = await openPrivateFile(path, 'a');
        try {
          await file.write(line);
          await file.datasync();
        } finally {
          await file.close();
        }
      });
      tail = done.catch(() => undefined);
      return done;
    },
  };
}

function redacted(r: AuditRecord): AuditRecord {
  const shorten = (o: AnyResource | null): AnyResource | null => {
    if (o?.kind !== 'ApiClient') return o;
    return { ...o, spec: { ...o.spec, keyHash: `${o.spec.keyHash.slice(0, 8)}…` } };
  };
  return { ...r, from: shorten(r.from), to: shorten(r.to) };
}
