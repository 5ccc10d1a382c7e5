/**
 * What `agent-wallet dev` does in its data directory, without starting a devnet of its own (it uses the run's,
 * AGENT_WALLET_TEST_MANIFEST): the service secret made and kept there, every role with the admin socket, the
 * development key, and a compaction (snapshot and a new log segment) as the store's timer would do later.
 * `node bin/run-ts.js test/support/devServiceChild.ts <dataDir>`; prints one JSON line: url, the dev key and
 * the process's umask (as /proc reports it, so a test can check it runs under the umask it asked for).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadOrCreateServiceSecret } from '../../src/config/serviceSecret.ts';
import { chainConfigsFromManifest, loadManifest } from '../../src/devnet/devnet.ts';
import { ensureDevKey } from '../../src/roles/devKey.ts';
import { startEmbeddedService } from '../../src/roles/embedded.ts';

const [dataDir] = process.argv.slice(2);
const manifestPath = process.env.AGENT_WALLET_TEST_MANIFEST;
if (!dataDir || !manifestPath) {
  process.stderr.write('usage: devServiceChild <dataDir> (AGENT_WALLET_TEST_MANIFEST set)\n');
  process.exit(2);
}
const service = await startEmbeddedService({
  dataDir,
  serviceSecret: await loadOrCreateServiceSecret(join(dataDir, 'service-secret'), {}),
  chains: chainConfigsFromManifest(loadManifest(manifestPath)),
  port: 0,
  adminSocket: true,
  // Finished requests move to the archive at once, so a test sees its files.
  retentionSeconds: 1,
  logLevel: 'warn',
});
const { apiKey } = await ensureDevKey(service.store, dataDir, service.webhookSecrets);
await service.store.compact();
const umask = /^Umask:\s*(\d+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
process.stdout.write(JSON.stringify({ url: service.url, apiKey, umask }) + '\n');
process.on('SIGTERM', () => void service.stop().then(() => process.exit(0)));
