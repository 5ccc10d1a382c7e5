import { promises as fs } from 'node:fs';

/** Makes a directory's entries (a created, renamed or removed file) durable. */
export async function fsyncDir(dir: string): Promise<void> {
  const fh = await fs.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
