import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * The service secret derives every wallet owner key (src/chain/ownerKey.ts): losing it loses control of the
 * wallets, changing it changes every address. A cluster passes it in (AGENT_WALLET_SERVICE_SECRET, from a
 * Kubernetes Secret); the embedded mode makes one on first start and keeps it, mode 0600, in the data dir.
 */
export async function loadOrCreateServiceSecret(path: string, env = process.env): Promise<string> {
  const fromEnv = env.AGENT_WALLET_SERVICE_SECRET;
  if (fromEnv !== undefined && fromEnv !== '') {
    if (fromEnv.length < 32) throw new Error('AGENT_WALLET_SERVICE_SECRET must be at least 32 characters');
    return fromEnv;
  }
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const secret = randomBytes(32).toString('hex');
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, secret + '\n', { mode: 0o600, flag: 'wx' });
  return secret;
}
