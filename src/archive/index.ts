export { ArchiveError, DEFAULT_ARCHIVE_RETENTION_MS, type ArchiveErrorCode, type ExecutionArchive } from './types.ts';
export { createRedisArchive, type RedisArchiveOptions } from './redis.ts';
export { openFileArchive, type FileArchive, type FileArchiveOptions } from './files.ts';
