import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pino, type Logger as PinoLogger } from 'pino';
import { CliError, dataDirOption, parse, resolveDataDir } from '../lib/args.ts';
import { createChainWorker, type LocalChainWorker } from '../chain/index.ts';
import type { ChainName } from '../config/chains.ts';
import { loadOrCreateServiceSecret } from '../config/serviceSecret.ts';
import { chainConfigsFromManifest, loadManifest } from '../devnet/devnet.ts';
import {
  DEFAULT_FAUCET_PORT,
  FaucetConfigError,
  faucetSettingsFromConfig,
  faucetSettingsFromManifest,
  loadFaucetConfig,
  startFaucet,
  type StartFaucetOptions,
} from '../faucet/index.ts';
import type { RateLimiter } from '../ratelimit/index.ts';

/** The port of `faucet` and of the faucet `npm start` runs: --port, else AGENT_WALLET_FAUCET_PORT, else `fallback`. */
export function faucetPort(flag: string | undefined, fallback: number = DEFAULT_FAUCET_PORT): number {
  const port = Number(flag ?? process.env.AGENT_WALLET_FAUCET_PORT ?? fallback);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`invalid faucet port ${flag ?? process.env.AGENT_WALLET_FAUCET_PORT}`);
  return port;
}

interface FaucetSetup {
  options: StartFaucetOptions;
  log: PinoLogger;
  /** Closes what the setup opened (the chain workers or their clients, the Redis connection). */
  close(): Promise<void>;
}

/**
 * A deployment: the YAML file, each chain's worker reached over gRPC (it holds the faucet key and sends the drips),
 * the limits in Redis when the file names one.
 */
async function fromConfigFile(path: string, values: { port?: string | undefined; host?: string | undefined }): Promise<FaucetSetup> {
  let config;
  let settings;
  try {
    config = await loadFaucetConfig(path);
    settings = faucetSettingsFromConfig(config);
  } catch (e) {
    if (e instanceof FaucetConfigError) throw new CliError(e.message);
    throw e;
  }
  const log = pino({ level: config.logLevel, base: { role: 'faucet' } });
  const { connectChainWorker } = await import('../chain/grpc/client.ts');
  const workers = new Map(settings.chains.map((c) => [c.name, connectChainWorker(c.name, c.chainWorker!, { log })] as const));
  const closeWorkers = async () => {
    for (const w of workers.values()) await w.close();
  };
  let limiter: RateLimiter | undefined;
  let close = closeWorkers;
  if (config.redis) {
    const { connectRedis, closeRedis, redisPasswordFromEnv, whenRedisReady } = await import('../redis/connect.ts');
    const { createRedisRateLimiter } = await import('../ratelimit/redis.ts');
    const redis = connectRedis(config.redis.url, { ...redisPasswordFromEnv(), name: 'agent-wallet-faucet', logger: log });
    // Serve once the shared limits are reachable: a drip answered from the per-process fallback meanwhile would
    // not count against the address in Redis (a restart could then hand out a second drip). If Redis stays
    // away, the limiter's fallback still limits per process.
    await whenRedisReady(redis).catch((err: unknown) => log.warn({ err }, 'faucet: Redis is not reachable yet; limiting per process until it is'));
    limiter = createRedisRateLimiter(redis, { keyPrefix: 'aw:faucet:rl:', logger: log });
    close = async () => {
      await closeWorkers();
      await closeRedis(redis);
    };
  }
  const options = { settings, workers, port: faucetPort(values.port, config.port), host: values.host ?? config.host, trustProxy: config.trustProxy, limiter, logger: log };
  return { options, log, close };
}

/**
 * The devnet: its manifest in the data dir (written by `agent-wallet dev`, which must be running for drips to go
 * through). This process runs the devnet's chain workers itself, for their faucet account only: the drips of
 * `npm start`'s own faucet come from the same account, so drip from one of the two at a time.
 */
async function fromDevnet(dataDir: string, values: { port?: string | undefined; host?: string | undefined; quiet?: boolean | undefined }): Promise<FaucetSetup> {
  const manifestPath = join(dataDir, 'devnet', 'manifest.json');
  if (!existsSync(manifestPath)) {
    throw new CliError(
      `no devnet manifest at ${manifestPath}: start the devnet first (npm start, or agent-wallet dev --data-dir ${dataDir}), or pass --config F for a deployment`,
    );
  }
  let settings;
  let manifest;
  try {
    manifest = loadManifest(manifestPath);
    settings = faucetSettingsFromManifest(manifest);
  } catch (e) {
    throw new CliError(`cannot use the devnet manifest ${manifestPath}: ${(e as Error).message}`);
  }
  const log = pino({ level: values.quiet === true ? 'warn' : 'info', base: { role: 'faucet' } });
  const serviceSecret = await loadOrCreateServiceSecret(join(dataDir, 'service-secret'));
  const workers = new Map<ChainName, LocalChainWorker>();
  const close = async () => {
    for (const w of workers.values()) await w.close();
  };
  try {
    for (const config of chainConfigsFromManifest(manifest)) {
      workers.set(config.name, await createChainWorker(config, { serviceSecret, log: log.child({ chain: config.name }) }));
    }
  } catch (e) {
    await close();
    throw new CliError(`cannot reach the devnet of ${manifestPath} (is agent-wallet dev running?): ${(e as Error).message}`);
  }
  return { options: { settings, workers, port: faucetPort(values.port), host: values.host ?? '127.0.0.1', logger: log }, log, close };
}

/**
 * `agent-wallet faucet-server`: the aUSD faucet (spec §2.7 `{faucet_url}`) on its own port. With `--config F` (or
 * AGENT_WALLET_FAUCET_CONFIG) it serves a deployment's chains; without, the devnet of `--data-dir`.
 */
export async function runFaucet(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    ...dataDirOption,
    config: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    quiet: { type: 'boolean', default: false },
  });
  const configPath = values.config ?? process.env.AGENT_WALLET_FAUCET_CONFIG;
  const setup = configPath !== undefined ? await fromConfigFile(configPath, values) : await fromDevnet(resolveDataDir(values['data-dir']), values);
  let faucet;
  try {
    faucet = await startFaucet(setup.options);
  } catch (e) {
    await setup.close();
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new CliError(`port ${setup.options.port} is in use: pass --port`);
    throw e;
  }
  process.stdout.write(`aUSD faucet listening on ${faucet.url} (sends from ${faucet.faucet.info.faucet_address})\n`);

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  setup.log.info({ signal }, 'faucet stopping');
  await faucet.stop();
  await setup.close();
  return 0;
}
