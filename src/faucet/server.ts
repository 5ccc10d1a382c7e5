import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { pino, type Level, type Logger as PinoLogger } from 'pino';
import { createInMemoryRateLimiter, type RateLimiter } from '../ratelimit/index.ts';
import { buildFaucetApp } from './app.ts';
import type { FaucetSettings } from './config.ts';
import { createFaucet, type Faucet } from './faucet.ts';
import { createDripLimits } from './limits.ts';
import { createTokenSender, type FaucetChainWorker } from './sender.ts';
import type { ChainName } from '../config/chains.ts';

export interface StartFaucetOptions {
  settings: FaucetSettings;
  /** Each served chain's worker: in process (the devnet), or a gRPC client of a cluster's chain worker. */
  workers: ReadonlyMap<ChainName, FaucetChainWorker>;
  /** TCP port; 0 picks a free one (default 8090). */
  port?: number;
  host?: string;
  trustProxy?: boolean | string;
  /** Where the limits' token buckets live: in memory (default), or Redis (createRedisRateLimiter). */
  limiter?: RateLimiter;
  /** A pino logger; else one at `logLevel` (default `silent`) on stdout. */
  logger?: PinoLogger;
  logLevel?: Level | 'silent';
}

export interface RunningFaucet {
  /** Where it listens, e.g. http://127.0.0.1:8090. */
  url: string;
  app: FastifyInstance;
  faucet: Faucet;
  /** Stops taking requests, lets the drips under way finish. */
  stop(): Promise<void>;
}

export const DEFAULT_FAUCET_PORT = 8090;

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}

/**
 * The faucet as a process runs it: sender (through the chain workers), limits, HTTP server; `agent-wallet
 * faucet-server` and `npm start` call this. The workers stay the caller's to close.
 */
export async function startFaucet(opts: StartFaucetOptions): Promise<RunningFaucet> {
  const log = opts.logger ?? pino({ level: opts.logLevel ?? 'silent' });
  const { settings } = opts;
  const sender = await createTokenSender({
    chains: settings.chains,
    workers: opts.workers,
    receiptTimeoutMs: settings.receiptTimeoutMs,
    receiptPollMs: settings.receiptPollMs,
    logger: log,
  });
  const faucet = createFaucet({ settings, sender, limits: createDripLimits(opts.limiter ?? createInMemoryRateLimiter(), settings.limits) });
  const app = await buildFaucetApp({ faucet, logger: log, trustProxy: opts.trustProxy, version: packageVersion() });
  let url: string;
  try {
    url = await app.listen({ port: opts.port ?? DEFAULT_FAUCET_PORT, host: opts.host ?? '127.0.0.1' });
  } catch (e) {
    await app.close();
    await sender.close();
    throw e;
  }
  let stopped: Promise<void> | undefined;
  return {
    url,
    app,
    faucet,
    stop: () =>
      (stopped ??= (async () => {
        await app.close();
        await sender.close();
      })()),
  };
}
