import { join } from 'node:path';
import { createKey } from '../keys/manage.ts';
import { authenticateApiKey } from '../keys/authenticate.ts';
import { readPrivateFile, writePrivateFile } from '../lib/privateFs.ts';
import type { ResourceStore } from '../store/types.ts';
import type { WebhookSecretStore } from '../webhooks/secrets/types.ts';

/**
 * The dev role's convenience key, so a newcomer can make a request right away. It is a real sponsored key,
 * stored hashed like any other; its plain text is also kept in `<dataDir>/dev-api-key` (mode 0600) so that
 * every start can print it, with its webhook signing secret. Production roles never do this.
 */
export async function ensureDevKey(
  store: ResourceStore,
  dataDir: string,
  webhookSecrets: WebhookSecretStore,
): Promise<{ apiKey: string; webhookSecret: string | undefined; created: boolean }> {
  const path = join(dataDir, 'dev-api-key');
  const existing = await readPrivateFile(path).then(
    (s) => s?.trim(),
    () => undefined,
  );
  if (existing) {
    const auth = await authenticateApiKey(store, existing);
    if (auth.ok) {
      const ref = auth.client.spec.webhookSigning?.current.secretRef;
      return { apiKey: existing, webhookSecret: ref === undefined ? undefined : await webhookSecrets.read(ref), created: false };
    }
  }
  const { api_key, webhook_secret } = await createKey(
    store,
    { mode: 'sponsored', name: 'development key (agent-wallet dev)' },
    undefined,
    webhookSecrets,
  );
  await writePrivateFile(path, api_key + '\n');
  return { apiKey: api_key, webhookSecret: webhook_secret, created: true };
}
