import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkOutBuild, UPGRADE_FROM } from './oldBuild.ts';

describe('checkOutBuild', () => {
  it("extracts the commit's tree with node_modules linked in, and removes it", async () => {
    const build = await checkOutBuild(UPGRADE_FROM);
    try {
      expect(existsSync(join(build.root, 'bin/run-ts.js'))).toBe(true);
      expect(lstatSync(join(build.root, 'node_modules')).isSymbolicLink()).toBe(true);
      // The baseline's ExecutionRequest has no spec.action yet (issue 17 added it).
      expect(readFileSync(join(build.root, 'src/api/v1alpha1/executionRequest.ts'), 'utf8')).not.toContain('ProtocolActionSchema');
    } finally {
      build.remove();
    }
    expect(existsSync(build.root)).toBe(false);
  });

  it('fails, saying how to fetch history, when the commit is not in the clone', async () => {
    await expect(checkOutBuild('0123456789abcdef0123456789abcdef01234567')).rejects.toThrow(/git fetch --unshallow/);
  });
});
