import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLayers, describeReport, readLayers } from '../../scripts/check-layers.ts';

const fixture = join(import.meta.dirname, 'fixture');

describe('the import check (scripts/check-layers.ts) on a fixture with planted problems', () => {
  const ranks = readLayers(readFileSync(join(fixture, 'docs/architecture.md'), 'utf8'));
  const report = checkLayers(fixture, ranks);

  it('reads the layer order from the architecture page', () => {
    expect([...ranks]).toEqual([
      ['base', 0],
      ['mid', 1],
      ['top', 2],
    ]);
  });

  it('reports the planted cycle, the planted upward import, and the folder without a layer', () => {
    expect(report.cycles).toEqual([['base', 'top']]);
    expect(report.upward.map((u) => `${u.from}->${u.to}`)).toEqual(['base->top']);
    expect(report.upward[0]!.imports).toEqual(['src/base/a.ts -> ../top/c.ts']);
    expect(report.unplaced).toEqual(['stray']);
    expect(describeReport(report)).toHaveLength(4);
  });

  it('does not report imports that point down, nor testing/ helpers', () => {
    expect(report.upward.some((u) => u.from === 'mid')).toBe(false);
  });

  it('reports a src/ helper importing the test tree, but not a test or bench doing so', () => {
    expect(report.intoTests).toEqual(['src/mid/testing/helper.ts -> ../../../test/support/env.ts']);
  });
});
