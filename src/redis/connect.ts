import { Redis } from 'ioredis';
import type { Logger } from '../lib/logger.ts';

export interface ConnectRedisOptions {
  /** Overrides a password in the URL; see {@link redisPasswordFromEnv}. */
  password?: string;
  /** Shown by CLIENT LIST (e.g. `controller`, `chain-worker-base`): which role holds a connection. */
  name?: string;
  /** Every command settles within this (default 5 s), queued or sent: a hung server never hangs a caller. */
  commandTimeoutMs?: number;
  /** Connection errors are logged here, once per outage rather than once per reconnect attempt. */
  logger?: Logger;
}

/** Reads AGENT_WALLET_REDIS_PASSWORD (the cluster roles' Secret reference), when set and not empty. */
export function redisPasswordFromEnv(env: NodeJS.ProcessEnv = process.env): { password?: string } {
  const password = env.AGENT_WALLET_REDIS_PASSWORD;
  return password ? { password } : {};
}

/**
 * An ioredis client for the shared state of the cluster roles (nonce locks, rate limits, the archive).
 *
 * What happens when Redis goes away decides these options:
 * - connect at once (not lazily), so a wrong URL or password shows in the logs at startup;
 * - reconnect forever with a backoff capped at 2 s: a role must come back by itself when Redis does;
 * - commands issued while disconnected wait in the offline queue (a restart of Redis or a failover is
 *   absorbed), but only through 2 reconnect attempts (`maxRetriesPerRequest`), and every command is bounded
 *   by `commandTimeoutMs` on top: callers (a nonce lock on the request path) get an error within seconds
 *   and the controller's retry with backoff takes over, instead of piling up behind a dead server;
 * - no auto-pipelining: the lock and rate-limit scripts are single round trips already.
 *
 * The caller owns the client: `await redis.quit()` when done.
 *
 * @example
 * const redis = connectRedis(config.redis.url, { ...redisPasswordFromEnv(), name: 'gateway', logger });
 */
export function connectRedis(url: string, opts: ConnectRedisOptions = {}): Redis {
  const redis = new Redis(url, {
    ...(opts.password !== undefined && { password: opts.password }),
    ...(opts.name !== undefined && { connectionName: opts.name }),
    lazyConnect: false,
    enableOfflineQueue: true,
    maxRetriesPerRequest: 2,
    commandTimeout: opts.commandTimeoutMs ?? 5_000,
    connectTimeout: 5_000,
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 6), 2_000),
  });
  let down = false;
  redis.on('error', (err: Error) => {
    if (down) return;
    down = true;
    opts.logger?.warn({ err, redis: redactUrl(url) }, 'redis: connection failed; reconnecting');
  });
  redis.on('ready', () => {
    if (down) opts.logger?.info({ redis: redactUrl(url) }, 'redis: connected again');
    down = false;
  });
  return redis;
}

/** The URL without its credentials, for logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable redis url)';
  }
}

/** Closes a client politely (QUIT), or at once if the server does not answer. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}

/**
 * Resolves once the client is connected (at once if it is), rejects after `timeoutMs`: for a role's
 * startup and tests, since commands issued before that wait in the offline queue or, for the rate
 * limiter, are answered per replica.
 */
export function whenRedisReady(redis: Redis, timeoutMs = 10_000): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new Error(`redis: not connected after ${timeoutMs} ms (status ${redis.status})`));
    }, timeoutMs);
    redis.once('ready', onReady);
  });
}
