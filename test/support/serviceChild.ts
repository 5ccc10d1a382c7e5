/**
 * The service as a separate process, for crash tests: `node bin/run-ts.js test/support/serviceChild.ts
 * <dataDir> <serviceSecret>` (manifest from AGENT_WALLET_TEST_MANIFEST). Prints one JSON line with the URL.
 */
import { chainConfigsFromManifest, loadManifest } from '../../src/devnet/devnet.ts';
import { startEmbeddedService } from '../../src/roles/embedded.ts';

const [dataDir, serviceSecret] = process.argv.slice(2);
const manifestPath = process.env.AGENT_WALLET_TEST_MANIFEST;
if (!dataDir || !serviceSecret || !manifestPath) {
  process.stderr.write('usage: serviceChild <dataDir> <serviceSecret> (AGENT_WALLET_TEST_MANIFEST set)\n');
  process.exit(2);
}
const service = await startEmbeddedService({
  dataDir,
  serviceSecret,
  chains: chainConfigsFromManifest(loadManifest(manifestPath)),
  port: 0,
  adminSocket: true,
  logLevel: 'warn',
});
process.stdout.write(JSON.stringify({ url: service.url }) + '\n');
process.on('SIGTERM', () => void service.stop().then(() => process.exit(0)));
