import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pino, type Logger as PinoLogger } from 'pino';
import { CliError, dataDirOption, parse, resolveDataDir } from '../lib/args.ts';
import { loadManifest } from '../devnet/devnet.ts';
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
  /** Closes what the setup opened (the Redis connection). */
  close(): Promise<void>;
}

/** A deployment: the YAML file, the key from the environment, the limits in Redis when the file names one. */
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
  let limiter: RateLimiter | undefined;
  let close = async () => {};
  if (config.redis) {
    const { connectRedis, closeRedis, redisPasswordFromEnv, whenRedisReady } = await import('../redis/connect.ts');
    const { createRedisRateLimiter } = await import('../ratelimit/redis.ts');
    const redis = connectRedis(config.redis.url, { ...redisPasswordFromEnv(), name: 'agent-wallet-faucet', logger: log });
    // Serve once the shared limits are reachable: a drip answered from the per-process fallback meanwhile would
    // not count against the address in Redis (a restart could then hand out a second drip). If Redis stays
    // away, the limiter's fallback still limits per process.
    await whenRedisReady(redis).catch((err: unknown) => log.warn({ err }, 'faucet: Redis is not reachable yet; limiting per process until it is'));
    limiter = createRedisRateLimiter(redis, { keyPrefix: 'aw:faucet:rl:', logger: log });
    close = () => closeRedis(redis);
  }
  const options = { settings, port: faucetPort(values.port, config.port), host: values.host ?? config.host, trustProxy: config.trustProxy, limiter, logger: log };
  return { options, log, close };
}

/** The devnet: its manifest in the data dir (written by `agent-wallet dev`, which must be running for drips to go through). */
function fromDevnet(dataDir: string, values: { port?: string | undefined; host?: string | undefined; quiet?: boolean | undefined }): FaucetSetup {
  const manifestPath = join(dataDir, 'devnet', 'manifest.json');
  if (!existsSync(manifestPath)) {
    throw new CliError(
      `no devnet manifest at ${manifestPath}: start the devnet first (npm start, or agent-wallet dev --data-dir ${dataDir}), or pass --config F for a deployment`,
    );
  }
  let settings;
  try {
    settings = faucetSettingsFromManifest(loadManifest(manifestPath));
  } catch (e) {
    throw new CliError(`cannot use the devnet manifest ${manifestPath}: ${(e as Error).message}`);
  }
  const log = pino({ level: values.quiet === true ? 'warn' : 'info', base: { role: 'faucet' } });
  return { options: { settings, port: faucetPort(values.port), host: values.host ?? '127.0.0.1', logger: log }, log, close: async () => {} };
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
  const setup = configPath !== undefined ? await fromConfigFile(configPath, values) : fromDevnet(resolveDataDir(values['data-dir']), values);
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
