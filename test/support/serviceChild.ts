/**
 * The service as a separate process, for crash tests: `node bin/run-ts.js test/support/serviceChild.ts
 * <dataDir> <serviceSecret>` (manifest from AGENT_WALLET_TEST_MANIFEST). Prints one JSON line with the URL.
 * AGENT_WALLET_TEST_WEBHOOKS may hold the `webhooks` option as JSON, with `caPath` for a test receiver's CA.
 * AGENT_WALLET_TEST_BUNDLERS may hold, as JSON by chain name, an outside bundler's configuration for that chain.
 */
import { readFileSync } from 'node:fs';
import { chainConfigsFromManifest, loadManifest } from '../../src/devnet/devnet.ts';
import { startEmbeddedService } from '../../src/roles/embedded.ts';
import { withBundlers } from './alto.ts';

const [dataDir, serviceSecret] = process.argv.slice(2);
const manifestPath = process.env.AGENT_WALLET_TEST_MANIFEST;
if (!dataDir || !serviceSecret || !manifestPath) {
  process.stderr.write('usage: serviceChild <dataDir> <serviceSecret> (AGENT_WALLET_TEST_MANIFEST set)\n');
  process.exit(2);
}
const webhooks = process.env.AGENT_WALLET_TEST_WEBHOOKS ? (JSON.parse(process.env.AGENT_WALLET_TEST_WEBHOOKS) as Record<string, unknown>) : undefined;
const { caPath, ...webhookSettings } = (webhooks ?? {}) as { caPath?: string };
const service = await startEmbeddedService({
  ...(webhooks && { webhooks: { ...webhookSettings, ...(caPath && { ca: readFileSync(caPath, 'utf8') }) } }),
  dataDir,
  serviceSecret,
  chains: withBundlers(chainConfigsFromManifest(loadManifest(manifestPath)), process.env.AGENT_WALLET_TEST_BUNDLERS),
  port: 0,
  adminSocket: true,
  logLevel: 'warn',
  spendStatusMs: 1_000, // crash tests read the policies' spend
});
process.stdout.write(JSON.stringify({ url: service.url }) + '\n');
process.on('SIGTERM', () => void service.stop().then(() => process.exit(0)));
