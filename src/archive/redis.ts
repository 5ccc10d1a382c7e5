import type { Redis } from 'ioredis';
import { parseArchived, parseInclusionMark } from './codec.ts';
import { ArchiveError, DEFAULT_ARCHIVE_RETENTION_MS, DEFAULT_NAMESPACE, validArchiveName, type ExecutionArchive } from './types.ts';

export interface RedisArchiveOptions {
  /** How long an archived request stays readable (default 30 days). */
  retentionMs?: number;
  /** Default `aw:archive:`; keys are `<prefix><namespace>:<name>`. */
  keyPrefix?: string;
}

/**
 * The cluster's archive: one Redis key per finished request, holding its JSON, expiring after
 * `retentionMs`.
 *
 * Durability is Redis's: it must run with AOF (`appendonly yes`, `appendfsync everysec`), so a crash loses
 * at most the last second of archived requests and a restart keeps the rest. That is the trade-off we chose:
 * Redis is already a hard dependency of the cluster (locks, rate limits), so the archive adds no datastore
 * to run, back up and secure; it is sized by the retention (a few KB per request). A deployment that needs
 * years of history should export from here to its own warehouse.
 *
 * @example
 * const archive = createRedisArchive(redis, { retentionMs: 30 * 24 * 3_600_000 });
 */
export function createRedisArchive(redis: Redis, opts: RedisArchiveOptions = {}): ExecutionArchive {
  const retentionMs = Math.ceil(opts.retentionMs ?? DEFAULT_ARCHIVE_RETENTION_MS);
  if (!(retentionMs > 0)) throw new RangeError(`archive retention must be positive, got ${opts.retentionMs}`);
  const prefix = opts.keyPrefix ?? 'aw:archive:';
  const keyOf = (namespace: string, name: string) => `${prefix}${namespace}:${name}`;
  // `_` cannot start an object name: no request's key is a mark's.
  const markKeyOf = (namespace: string, chain: string) => `${prefix}${namespace}:_inclusion:${chain}`;

  return {
    async put(req) {
      const { name, namespace } = req.metadata;
      if (!validArchiveName(name, namespace)) {
        throw new ArchiveError('Invalid', `cannot archive ${namespace}/${name}: not a valid object name`);
      }
      try {
        await redis.set(keyOf(namespace, name), JSON.stringify(req), 'PX', retentionMs);
      } catch (cause) {
        throw unavailable(cause);
      }
    },

    async get(name, namespace = DEFAULT_NAMESPACE) {
      if (!validArchiveName(name, namespace)) return undefined;
      let json: string | null;
      try {
        json = await redis.get(keyOf(namespace, name));
      } catch (cause) {
        throw unavailable(cause);
      }
      return json === null ? undefined : parseArchived(json, `${namespace}/${name}`);
    },

    async putInclusionMark(mark, namespace = DEFAULT_NAMESPACE) {
      try {
        await redis.set(markKeyOf(namespace, mark.chain), JSON.stringify(mark), 'PX', retentionMs);
      } catch (cause) {
        throw unavailable(cause);
      }
    },

    async inclusionMark(chain, namespace = DEFAULT_NAMESPACE) {
      let json: string | null;
      try {
        json = await redis.get(markKeyOf(namespace, chain));
      } catch (cause) {
        throw unavailable(cause);
      }
      return json === null ? undefined : parseInclusionMark(json, `${namespace}/${chain}`);
    },

    async close() {
      // The client belongs to the caller.
    },
  };
}

const unavailable = (cause: unknown) =>
  new ArchiveError('Unavailable', `the archive (Redis) did not answer: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
