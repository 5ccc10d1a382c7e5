import { join } from 'node:path';
import { parse, resolveDataDir, CliError } from '../lib/args.ts';
import { loadOrCreateServiceSecret } from '../config/serviceSecret.ts';
import { ensurePrivateDir } from '../lib/privateFs.ts';
import { registerRunningService } from '../admin/running.ts';
import { doctorTarget, healthy, runDoctor } from '../doctor/index.ts';
import { startEmbeddedService } from './embedded.ts';
import { startTracingFromEnv, stopTracing } from '../lib/tracing.ts';
import { keysFromEnv, NETWORK_OPTIONS, networkChainConfig, networkInputs } from './networks.ts';

export const SERVE_OPTIONS = {
  ...NETWORK_OPTIONS,
  port: { type: 'string' },
  host: { type: 'string' },
  'data-dir': { type: 'string' },
  'skip-doctor': { type: 'boolean' },
  quiet: { type: 'boolean' },
} as const;

/**
 * `agent-wallet serve --network N …`: every role of the service in one process, as `dev` runs them, on shipped
 * testnets (networks/) through the operator's RPC URLs, contracts and keys instead of a devnet. No faucet and no
 * development key: API keys come from `agent-wallet keys create` (this service registers itself for it). Before it
 * listens it runs the doctor's checks on the same inputs: a failed one stops the start (--skip-doctor starts anyway).
 */
export async function runServe(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values } = parse(argv, SERVE_OPTIONS);
  if (!values.network?.length) throw new CliError('serve needs --network (sepolia, base-sepolia, arbitrum-sepolia); `agent-wallet dev` runs the local devnet');
  const dataDir = resolveDataDir(values['data-dir']);
  const port = Number(values.port ?? env.AGENT_WALLET_PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`invalid --port ${values.port}`);
  const host = values.host ?? env.AGENT_WALLET_HOST ?? '127.0.0.1';
  const say = (line: string) => process.stdout.write(line + '\n');

  const keys = keysFromEnv(env);
  const firstExecutor = keys.executorKeys[0];
  const chains = networkInputs(values, firstExecutor && /^0x[0-9a-fA-F]{64}$/.test(firstExecutor) ? (await import('viem/accounts')).privateKeyToAddress(firstExecutor as `0x${string}`) : undefined).map(
    ({ name, inputs }) => networkChainConfig(name, inputs, keys),
  );

  const results = await runDoctor(chains.map(doctorTarget));
  for (const r of results.filter((x) => x.status !== 'ok')) say(`doctor: ${r.status} ${r.chain} ${r.id}: ${r.detail}\n        what to do: ${r.fix}`);
  if (!healthy(results)) {
    if (values['skip-doctor'] !== true) {
      process.stderr.write('agent-wallet serve: a pre-flight check failed (above); fix it, or pass --skip-doctor to start anyway\n');
      return 1;
    }
    say('doctor: failed checks ignored (--skip-doctor)');
  } else say(`doctor: ${results.length} checks, none failed`);

  await ensurePrivateDir(dataDir);
  // Request traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md); off otherwise.
  await startTracingFromEnv('embedded');
  const service = await startEmbeddedService({
    dataDir,
    chains,
    serviceSecret: await loadOrCreateServiceSecret(join(dataDir, 'service-secret'), env),
    port,
    host,
    adminSocket: true,
    logLevel: values.quiet === true ? 'warn' : 'info',
    onStoreFatal: (err) => {
      process.stderr.write(`agent-wallet: the store stopped for good (${err.message}); exiting so it restarts from the disk\n`);
      process.exit(1);
    },
  }).catch((e: NodeJS.ErrnoException) => {
    throw e.code === 'EADDRINUSE' ? new CliError(`port ${port} is in use: pass --port`) : e;
  });
  const unregister = await registerRunningService({ dataDir, url: service.url });
  say(`agent-wallet is listening on ${service.url}, serving ${chains.map((c) => `${c.name} (chain ${c.chainId})`).join(', ')}`);
  say(`Create an API key: npx agent-wallet keys create --mode sponsored --data-dir ${dataDir}`);

  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await unregister();
  await service.stop();
  await stopTracing();
  return 0;
}
