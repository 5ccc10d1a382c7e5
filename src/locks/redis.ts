import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../lib/logger.ts';
import { redisScript } from '../redis/script.ts';
import { LockError, type LockManager } from './types.ts';

/**
 * The nonce locks of the cluster: a {@link LockManager} shared by every replica through Redis.
 *
 * A lock is `SET <prefix><key> <token> NX PX <ttl>`, with a fresh random token per acquisition; release is a
 * Lua compare-and-delete on that token, so a holder whose lease expired cannot delete its successor's lock.
 * Waiters sleep until a release is published on one channel (every manager subscribes once) or, failing
 * that, until the holder's lease runs out, and never longer than `maxPollMs`: a lost message, a crashed
 * holder or an expiry cannot strand a waiter.
 *
 * Why correctness does not rest on the lock: the chain worker takes `nonce:<chain>:<sender>` around reading
 * the EntryPoint nonce and signing the operation that uses it, and the bundler takes
 * `executor:<chain>:<executor>` around simulating and sending a bundle from that executor key. If a lease is
 * lost mid-section (a GC pause, Redis restarted without persistence, a partition), two replicas can sign two
 * operations with the same nonce or send two bundles from one executor. The EntryPoint nonce is the fencing
 * token: it accepts each (sender, nonce) once, so the second operation fails validation (AA25) and is never
 * executed (nothing is spent twice); the executor's transaction nonce does the same for its bundles. The lock
 * only keeps that race, and the wasted signature or gas, out of the common case.
 *
 * Fairness: waiters of one replica are served in arrival order (only the first contends in Redis). Across
 * replicas there is no queue, but a release that another replica is waiting for hands over: the releasing
 * replica's next waiter holds back for `handoffMs` before contending, so two busy replicas alternate rather
 * than one starving the other.
 *
 * Redis unreachable: `withLock` rejects with {@link LockError} `Unavailable` once the client gives up
 * (seconds, see connectRedis) rather than waiting forever; the controller's retry with backoff takes over.
 * A release that fails is logged and left to the lease's expiry.
 */
export { LockError, type LockErrorCode } from './types.ts';

export interface RedisLockManagerOptions {
  /** Prefix of the lock keys and the release channel (default `aw:lock:`). */
  keyPrefix?: string;
  /** Longest sleep of a waiter between attempts when no release is heard (default 1000 ms). */
  maxPollMs?: number;
  /** How long a replica's next waiter holds back after a release another replica waits for (default 20 ms). */
  handoffMs?: number;
  /** After each acquisition: the time from the call to holding the lock (a free lock: one round trip). */
  onWait?(key: string, ms: number): void;
  logger?: Logger;
}

export interface RedisLockManager extends LockManager {
  /** Stops listening for releases and fails current waiters with `Closed`. The Redis client stays the caller's. */
  close(): Promise<void>;
}

/** Returns 'ok' when taken; otherwise the holder's remaining lease in ms (-1: no expiry). Marks a foreign waiter. */
const ACQUIRE = redisScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if redis.call('GET', KEYS[2]) == ARGV[3] then redis.call('DEL', KEYS[2]) end
  return 'ok'
end
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
return redis.call('PTTL', KEYS[1])
`);

/** Extends the lease if the token still holds the lock: 1, else 0 (the lease lapsed and someone else may hold it). */
const RENEW = redisScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`);

/**
 * Deletes the lock if the token still holds it and announces `<replica> <key>`. Returns 0 (not ours), 1, or 2
 * (another replica is waiting for it).
 */
const RELEASE = redisScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], ARGV[3] .. ' ' .. KEYS[1])
local waiter = redis.call('GET', KEYS[2])
if waiter and waiter ~= ARGV[3] then return 2 end
return 1
`);

interface KeyState {
  /** Local turn: only its holder contends in Redis or holds the lock. */
  turn: number | undefined;
  /** Waiting for a turn, in arrival order. */
  queue: ((turn: number) => void)[];
  /** The contender heard a release since its last attempt. */
  notified: boolean;
  wake: (() => void) | undefined;
  /** The last release was wanted by another replica: the next local contender holds back first. */
  yieldNext: boolean;
  leaseTimer: NodeJS.Timeout | undefined;
}

/**
 * @example
 * const redis = connectRedis(config.redis.url, { ...redisPasswordFromEnv(), name: 'chain-worker' });
 * const locks = createRedisLockManager(redis, { onWait: (key, ms) => metrics.lockWait.observe(ms / 1000) });
 * const worker = await createChainWorker(chainConfig, { serviceSecret, locks, log });
 */
export function createRedisLockManager(redis: Redis, opts: RedisLockManagerOptions = {}): RedisLockManager {
  const prefix = opts.keyPrefix ?? 'aw:lock:';
  const channel = `${prefix}released`;
  const maxPollMs = opts.maxPollMs ?? 1_000;
  const handoffMs = opts.handoffMs ?? 20;
  /** A waiter refreshes its mark at least this often (each attempt), so the mark outlives no waiter for long. */
  const markerMs = 2 * maxPollMs + handoffMs;
  /** Identifies this manager's waiters to other replicas. */
  const replica = randomBytes(8).toString('hex');
  const keys = new Map<string, KeyState>();
  let nextTurn = 1;
  let closed = false;

  const subscriber = redis.duplicate();
  subscriber.on('error', () => undefined); // connection errors: the main client logs them; polling covers the gap
  subscriber.on('message', (_channel: string, message: string) => {
    // `<replica> <key>`. Our own releases hand over locally (endTurn), and must not cut a hand-over short.
    const space = message.indexOf(' ');
    if (message.slice(0, space) === replica) return;
    const st = keys.get(message.slice(space + 1));
    if (!st) return;
    st.notified = true;
    st.wake?.();
  });
  const subscribed = subscriber.subscribe(channel).catch((err: unknown) => {
    opts.logger?.warn({ err, channel }, 'locks: could not subscribe to releases; waiters fall back to polling');
  });

  function stateOf(redisKey: string): KeyState {
    let st = keys.get(redisKey);
    if (!st) {
      st = { turn: undefined, queue: [], notified: false, wake: undefined, yieldNext: false, leaseTimer: undefined };
      keys.set(redisKey, st);
    }
    return st;
  }

  function takeTurn(st: KeyState): Promise<number> {
    return new Promise((resolve) => {
      if (st.turn === undefined) resolve((st.turn = nextTurn++));
      else st.queue.push(resolve);
    });
  }

  function endTurn(redisKey: string, st: KeyState, turn: number): void {
    if (st.turn !== turn) return; // already ended by the lease timer
    if (st.leaseTimer) clearTimeout(st.leaseTimer);
    st.leaseTimer = undefined;
    st.wake = undefined;
    const next = st.queue.shift();
    if (next) next((st.turn = nextTurn++));
    else if (keys.get(redisKey) === st) keys.delete(redisKey);
  }

  /** Sleeps until a release is heard, `ms` pass, or the manager closes. */
  function sleep(st: KeyState, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        st.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      st.wake = done;
    });
  }

  function unavailable(key: string, e: unknown): LockError {
    return new LockError('Unavailable', `lock ${key}: Redis did not answer (${e instanceof Error ? e.message : String(e)})`, {
      cause: e,
      details: { key },
    });
  }

  async function acquire(key: string, redisKey: string, st: KeyState, token: string, ttlMs: number): Promise<void> {
    const waitingKey = `${redisKey}#waiting`;
    if (st.yieldNext) {
      // Another replica waits for this key: let it take the lock first. We stay marked as waiting, so its
      // release yields back to us; we contend at its release, or after handoffMs if it never takes the lock.
      st.yieldNext = false;
      try {
        await redis.set(waitingKey, replica, 'PX', markerMs);
      } catch (e) {
        throw unavailable(key, e);
      }
      await sleep(st, handoffMs);
    }
    for (;;) {
      if (closed) throw new LockError('Closed', `lock ${key}: the lock manager is closed`, { details: { key } });
      st.notified = false;
      let reply: unknown;
      try {
        reply = await ACQUIRE.run(redis, [redisKey, waitingKey], [token, ttlMs, replica, markerMs]);
      } catch (e) {
        throw unavailable(key, e);
      }
      if (reply === 'ok') return;
      if (st.notified) continue; // released between our attempt and now
      const pttl = Number(reply);
      await sleep(st, pttl >= 0 ? Math.min(pttl + 1, maxPollMs) : maxPollMs);
    }
  }

  /** Releases the lock in Redis; true when another replica is waiting for it. */
  async function release(key: string, redisKey: string, token: string): Promise<boolean> {
    try {
      return (await RELEASE.run(redis, [redisKey, `${redisKey}#waiting`], [token, channel, replica])) === 2;
    } catch (err) {
      opts.logger?.warn({ err, key }, 'locks: release failed; the lease expires by itself');
      return false;
    }
  }

  return {
    async withLock<T>(key: string, ttlMs: number, fn: () => Promise<T>): Promise<T> {
      if (!(ttlMs > 0)) throw new RangeError(`lock TTL must be positive, got ${ttlMs}`);
      if (closed) throw new LockError('Closed', `lock ${key}: the lock manager is closed`, { details: { key } });
      const started = performance.now();
      const redisKey = prefix + key;
      const st = stateOf(redisKey);
      const turn = await takeTurn(st);
      const token = randomBytes(16).toString('hex');
      try {
        await acquire(key, redisKey, st, token, Math.ceil(ttlMs));
      } catch (e) {
        endTurn(redisKey, st, turn);
        throw e;
      }
      opts.onWait?.(key, performance.now() - started);
      // The Redis lease started before this timer: when it fires, Redis has let the lock go too, so the
      // next local waiter may contend (and will find it free). Each renewal restarts it.
      const armLease = () => {
        if (st.leaseTimer) clearTimeout(st.leaseTimer);
        st.leaseTimer = setTimeout(() => endTurn(redisKey, st, turn), ttlMs);
        st.leaseTimer.unref();
      };
      armLease();
      // A live holder keeps its lock however long fn runs: the lease is renewed every third of the TTL, so
      // the TTL only bounds how long a holder that died (crash, lost connection) blocks the others.
      let renewing = true;
      const renewal = setInterval(() => {
        RENEW.run(redis, [redisKey], [token, Math.ceil(ttlMs)]).then(
          (ok) => {
            if (!renewing || st.turn !== turn) return;
            if (ok === 1) armLease();
            else opts.logger?.warn({ key }, 'locks: the lease lapsed while held (the nonce still fences the work)');
          },
          (err: unknown) => opts.logger?.warn({ err, key }, 'locks: lease renewal failed; retrying'),
        );
      }, Math.max(1, Math.floor(ttlMs / 3)));
      renewal.unref();
      try {
        return await fn();
      } finally {
        renewing = false;
        clearInterval(renewal);
        const wantedElsewhere = await release(key, redisKey, token);
        if (wantedElsewhere && st.turn === turn && st.queue.length > 0) st.yieldNext = true;
        endTurn(redisKey, st, turn);
      }
    },

    async close() {
      closed = true;
      for (const st of keys.values()) st.wake?.();
      await subscribed;
      try {
        await subscriber.quit();
      } catch {
        subscriber.disconnect();
      }
    },
  };
}
