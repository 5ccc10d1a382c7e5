import { constants } from 'node:fs';
import { chmod, mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { newSecretRef, SECRET_REF, type WebhookSecretStore } from './types.ts';

/** Where the embedded mode keeps them: `<data-dir>/webhook-secrets/`. */
export const webhookSecretsDir = (dataDir: string): string => join(dataDir, 'webhook-secrets');

/**
 * The embedded mode's webhook secrets: one file per secret in `dir` (the service uses
 * `<data-dir>/webhook-secrets/`), readable by the service's user only (0600, the directory 0700). Written
 * to a temporary file, synced, then renamed, so a crash leaves the secret whole or absent, never torn.
 */
export function openFileWebhookSecrets(dir: string): WebhookSecretStore {
  let ready: Promise<void> | undefined;
  const ensureDir = () =>
    (ready ??= (async () => {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await chmod(dir, 0o700); // an existing directory keeps its mode through mkdir
    })());

  return {
    async create(clientId, secret) {
      await ensureDir();
      const ref = newSecretRef(clientId);
      const path = join(dir, ref);
      const tmp = `${path}.tmp`;
      const file = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
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
      try {
        return (await readFile(join(dir, ref), 'utf8')).trim();
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw e;
      }
    },
  };
}
