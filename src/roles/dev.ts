import { join } from 'node:path';
import { parse, resolveDataDir, CliError } from '../lib/args.ts';
import { devParseOptions, devWebhookSettings } from './devOptions.ts';
import { loadOrCreateServiceSecret } from '../config/serviceSecret.ts';
import { startDevnet } from '../devnet/devnet.ts';
import { ensurePrivateDir } from '../lib/privateFs.ts';
import { faucetSettingsFromManifest, startFaucet, type RunningFaucet } from '../faucet/index.ts';
import { ensureDevKey } from './devKey.ts';
import { registerRunningService } from '../admin/running.ts';
import { startEmbeddedService } from './embedded.ts';
import { startTracingFromEnv, stopTracing } from '../lib/tracing.ts';
import { faucetPort } from './faucet.ts';

/**
 * `agent-wallet dev` (what `npm start` runs): the devnet's three anvil chains, then every role of the
 * service in this process on the embedded store, and the aUSD faucet on its own port; prints both URLs, a
 * development key and a ready curl line.
 */
export async function runDev(argv: string[]): Promise<number> {
  const { values } = parse(argv, devParseOptions);
  const dataDir = resolveDataDir(values['data-dir']);
  const port = Number(values.port ?? process.env.AGENT_WALLET_PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`invalid --port ${values.port}`);
  const host = values.host ?? process.env.AGENT_WALLET_HOST ?? '127.0.0.1';
  const faucetPortNumber = faucetPort(values['faucet-port']);
  const say = (line: string) => process.stdout.write(line + '\n');
  // 0700 whatever the umask, before anything is written in it: it holds the service secret, the devnet's keys,
  // the store and the admin socket (src/lib/privateFs.ts).
  await ensurePrivateDir(dataDir);

  say(`agent-wallet dev: data directory ${dataDir}`);
  const t0 = performance.now();
  const devnet = await startDevnet({ dataDir, log: (l) => say(`[devnet] ${l}`), protocols: { gmxKeeperDelayMs: gmxKeeperDelay(values['gmx-keeper-delay-ms']) } });
  say(`devnet ${devnet.manifest.fresh ? 'deployed (fresh chain state)' : 'reloaded'} in ${Math.round(performance.now() - t0)} ms; manifest ${devnet.manifestPath}`);

  // Request traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md); off otherwise.
  await startTracingFromEnv('embedded');
  let service;
  try {
    service = await startEmbeddedService({
      dataDir,
      chains: devnet.chainConfigs(),
      serviceSecret: await loadOrCreateServiceSecret(join(dataDir, 'service-secret')),
      port,
      host,
      adminSocket: true,
      logLevel: values.quiet === true ? 'warn' : 'info',
      // Development only, and only when asked: webhooks to a receiver on this machine (127.0.0.0/8, ::1).
      webhooks: devWebhookSettings(values),
      // The devnet's own settler account sends x402 settlements (it holds native coin on every chain).
      payments: {
        x402SettlerKey: devnet.manifest.accounts.settler?.privateKey,
      },
      onStoreFatal: (err) => {
        process.stderr.write(`agent-wallet: the store stopped for good (${err.message}); exiting so it restarts from the disk\n`);
        process.exit(1);
      },
    });
  } catch (e) {
    await devnet.stop();
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new CliError(`port ${port} is in use: pass --port`);
    throw e;
  }
  let faucet: RunningFaucet;
  try {
    faucet = await startFaucet({
      settings: faucetSettingsFromManifest(devnet.manifest),
      // The service's own chain workers send the drips: they hold the faucet account (chainConfigsFromManifest).
      workers: service.workers,
      port: faucetPortNumber,
      host,
      logLevel: values.quiet === true ? 'warn' : 'info',
    });
  } catch (e) {
    await service.stop();
    await devnet.stop();
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new CliError(`port ${faucetPortNumber} is in use: pass --faucet-port`);
    throw e;
  }
  const { apiKey, webhookSecret } = await ensureDevKey(service.store, dataDir, service.webhookSecrets);
  // So that `agent-wallet keys` run from anywhere without --data-dir finds this service's store (src/admin/running.ts).
  const unregister = await registerRunningService({ dataDir, url: service.url });

  const counter = devnet.manifest.chains.find((c) => c.name === 'ethereum')!.testContracts.counter;
  say('');
  say(`agent-wallet is listening on ${service.url}`);
  say(`aUSD faucet is listening on ${faucet.url} (a page for people; POST ${faucet.url}/api/drip for agents)`);
  say(`development API key (sponsored): ${apiKey}`);
  if (webhookSecret) say(`its webhook signing secret (verifies callback_url deliveries, docs/webhooks.md): ${webhookSecret}`);
  say('');
  say('Try it: execute Counter.increment() on the local "ethereum" chain, then poll the status:');
  say(
    `  curl -s -X POST ${service.url}/execute -H 'content-type: application/json' -H 'X-API-Key: ${apiKey}' \\\n` +
      `    -d '{"agent_id":"my-agent","chain":"ethereum","target_contract":"${counter}","calldata":"0xd09de08a","value":"0"}'`,
  );
  say(`  curl -s ${service.url}/status/<request_id> -H 'X-API-Key: ${apiKey}'`);
  say('Give a wallet test aUSD (its smart_wallet_address from GET /wallet):');
  say(`  curl -s -X POST ${faucet.url}/api/drip -H 'content-type: application/json' -d '{"address":"<smart_wallet_address>","chain":"ethereum"}'`);
  say('');
  say(`Manage keys while this runs: npx agent-wallet keys create --mode sponsored   (from any directory; --data-dir ${dataDir} when several services run)`);

  await new Promise<void>((resolve) => {
    const shutdown = (signal: string) => {
      say(`\n${signal}: stopping`);
      resolve();
    };
    process.once('SIGINT', () => shutdown('SIGINT'));
    process.once('SIGTERM', () => shutdown('SIGTERM'));
  });
  await unregister();
  await faucet.stop();
  await service.stop();
  await stopTracing();
  await devnet.stop();
  return 0;
}

/** `--gmx-keeper-delay-ms`: milliseconds, a whole number; unset leaves it to the environment or the default. */
function gmxKeeperDelay(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Number(value);
  if (value.trim() === '' || !Number.isInteger(ms) || ms < 0 || ms > 3_600_000) {
    throw new CliError(`invalid --gmx-keeper-delay-ms ${value}: a whole number of milliseconds from 0 to 3600000`);
  }
  return ms;
}
