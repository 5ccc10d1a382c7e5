import { constants } from 'node:fs';
import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { ensurePrivateTree, PRIVATE_FILE_MODE } from '../../lib/privateFs.ts';
import { newSecretRef, SECRET_REF, type WebhookSecretStore } from './types.ts';

/** Where the embedded mode keeps them: `<data-dir>/webhook-secrets/`. */
export const webhookSecretsDir = (dataDir: string): string => join(dataDir, 'webhook-secrets');

/**
 * The embedded mode's webhook secrets: one file per secret in `dir` (the service uses
 * `<data-dir>/webhook-secrets/`), readable by the service's user only (0600, the directory 0700). Written
 * to a temporary file, synced, then renamed, so a crash leaves the secret whole or absent, never torn.
 * Opening starts making the directory private (a looser one left by an older version, with what it holds);
 * every read and write waits for that.
 */
export function openFileWebhookSecrets(dir: string): WebhookSecretStore {
  const ready = ensurePrivateTree(dir);
  ready.catch(() => undefined); // not unhandled: the first read or write rethrows it

  return {
    async create(clientId, secret) {
      await ready;
      const ref = newSecretRef(clientId);
      const path = join(dir, ref);
      const tmp = `${path}.tmp`;
      const file = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, PRIVATE_FILE_MODE);
      try {
        await file.writeFile(secret, 'utf8');
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(tmp, path);
      const d = await open(dir, 'r');
      try {
        await d.sync();
      } finally {
        await d.close();
      }
      return ref;
    },
    async read(ref) {
      if (!SECRET_REF.test(ref)) return undefined; // never a path outside the directory
      await ready;
      try {
        return (await readFile(join(dir, ref), 'utf8')).trim();
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw e;
      }
    },
  };
}
