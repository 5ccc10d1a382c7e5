import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { mkdirPrivate, readPrivateFile, writePrivateFile } from '../lib/privateFs.ts';

/**
 * The service secret derives every wallet owner key (src/chain/ownerKey.ts): losing it loses control of the
 * wallets, changing it changes every address. A cluster passes it in (AGENT_WALLET_SERVICE_SECRET, from a
 * Kubernetes Secret); the embedded mode makes one on first start and keeps it, mode 0600, in the data dir
 * (a looser mode left by hand or an older version is tightened when it is read).
 */
export async function loadOrCreateServiceSecret(path: string, env = process.env): Promise<string> {
  const fromEnv = env.AGENT_WALLET_SERVICE_SECRET;
  if (fromEnv !== undefined && fromEnv !== '') {
    if (fromEnv.length < 32) throw new Error('AGENT_WALLET_SERVICE_SECRET must be at least 32 characters');
    return fromEnv;
  }
  const existing = await readPrivateFile(path);
  if (existing !== undefined) return existing.trim();
  const secret = randomBytes(32).toString('hex');
  await mkdirPrivate(dirname(path));
  await writePrivateFile(path, secret + '\n', 'wx');
  return secret;
}
