/**
 * Writes the CustomResourceDefinitions derived from the zod schemas to crds/ and charts/agent-wallet/crds/,
 * and removes generated files of kinds that no longer exist. crd.test.ts fails when the committed files differ
 * from what this writes, so run it after changing a schema in src/api/v1alpha1.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRD_DIRS, CRD_FILE_SUFFIX, crdFiles } from '../src/api/v1alpha1/crd/render.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const files = crdFiles();
const wanted = new Set(files.map((f) => f.path));

for (const dir of CRD_DIRS) {
  mkdirSync(join(root, dir), { recursive: true });
  for (const name of readdirSync(join(root, dir))) {
    const path = `${dir}/${name}`;
    if (name.endsWith(CRD_FILE_SUFFIX) && !wanted.has(path)) {
      rmSync(join(root, path));
      console.log(`removed ${path}`);
    }
  }
}
for (const f of files) {
  writeFileSync(join(root, f.path), f.text);
  console.log(`wrote ${f.path}`);
}
