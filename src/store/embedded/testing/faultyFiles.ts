import { nodeLogFiles, type LogFile, type LogFiles } from '../wal.ts';

/**
 * The log's file operations on the real file system, with the faults of a full or failing disk switched on
 * and off by the test:
 * - `space`: bytes the disk still takes (undefined: no limit). A write that needs more writes what fits and
 *   returns the short count, and the next one fails with ENOSPC, as the kernel's writes do when space runs
 *   out, so the log's tail holds part of a record.
 * - `failSync`: fdatasync fails with EIO after the data reached the file (the page cache), so a record the
 *   store never acknowledged is in the file, whole: what Linux does when writeback fails ("fsyncgate").
 */
export interface FaultyFiles extends LogFiles {
  space: number | undefined;
  failSync: boolean;
  /** Faults raised so far. */
  readonly faults: number;
}

export function faultyFiles(): FaultyFiles {
  let faults = 0;
  const fault = (code: 'ENOSPC' | 'EIO', syscall: string) => {
    faults++;
    const message = code === 'ENOSPC' ? 'no space left on device' : 'i/o error';
    return Object.assign(new Error(`${code}: ${message}, ${syscall}`), { code, syscall });
  };
  const files: FaultyFiles = {
    space: undefined,
    failSync: false,
    get faults() {
      return faults;
    },
    async open(path, flags) {
      const real = await nodeLogFiles.open(path, flags);
      const file: LogFile = {
        async write(buffer, offset, length) {
          if (files.space === undefined) return real.write(buffer, offset, length);
          const n = Math.min(length, files.space);
          if (n === 0) throw fault('ENOSPC', 'write');
          files.space -= n;
          return real.write(buffer, offset, n);
        },
        async datasync() {
          if (files.failSync) throw fault('EIO', 'fdatasync');
          return real.datasync();
        },
        truncate: (length) => real.truncate(length),
        close: () => real.close(),
      };
      return file;
    },
    syncDir: (dir) => nodeLogFiles.syncDir(dir),
    remove: (path) => nodeLogFiles.remove(path),
  };
  return files;
}
