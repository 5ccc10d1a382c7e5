import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createKey } from '../keys/manage.ts';
import { authenticateApiKey } from '../keys/authenticate.ts';
import type { ResourceStore } from '../store/types.ts';

/**
 * The dev role's convenience key, so a newcomer can make a request right away. It is a real sponsored key,
 * stored hashed like any other; its plain text is also kept in `<dataDir>/dev-api-key` (mode 0600) so that
 * every start can print it. Production roles never do this.
 */
export async function ensureDevKey(store: ResourceStore, dataDir: string): Promise<{ apiKey: string; created: boolean }> {
  const path = join(dataDir, 'dev-api-key');
  const existing = await readFile(path, 'utf8').then(
    (s) => s.trim(),
    () => undefined,
  );
  if (existing && (await authenticateApiKey(store, existing)).ok) return { apiKey: existing, created: false };
  const { api_key } = await createKey(store, { mode: 'sponsored', name: 'development key (agent-wallet dev)' });
  await writeFile(path, api_key + '\n', { mode: 0o600 });
  return { apiKey: api_key, created: true };
}
