import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A Lua script run by its SHA1 (EVALSHA), loaded on first use and again after a restart flushed it. */
export interface RedisScript {
  run(redis: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

export function redisScript(lua: string): RedisScript {
  const sha = createHash('sha1').update(lua).digest('hex');
  return {
    async run(redis, keys, args) {
      try {
        return await redis.evalsha(sha, keys.length, ...keys, ...args);
      } catch (e) {
        if (!(e instanceof Error) || !e.message.startsWith('NOSCRIPT')) throw e;
        return redis.eval(lua, keys.length, ...keys, ...args);
      }
    },
  };
}
