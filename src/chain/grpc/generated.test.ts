import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/support/env.ts';

const root = join(import.meta.dirname, '../../..');
const GENERATED = 'src/chain/grpc/generated';

function files(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out;
}

describe('generated gRPC code', () => {
  const out = tempDir('aw-proto-');
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('is what scripts/gen-proto.sh makes of proto/ now (regenerate and commit after editing a .proto)', () => {
    execFileSync('sh', [join(root, 'scripts/gen-proto.sh'), out], { cwd: root, stdio: 'pipe' });
    const fresh = files(join(out, GENERATED));
    const committed = files(join(root, GENERATED));
    expect(fresh.size).toBeGreaterThan(0);
    expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [path, text] of fresh) expect(committed.get(path), `${GENERATED}/${path} is stale: run npm run proto:gen`).toBe(text);
  });
});
