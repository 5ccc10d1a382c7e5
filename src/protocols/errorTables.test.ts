import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AAVE_ERRORS_SOURCE, aaveErrorsModule, MORPHO_ERRORS_SOURCE, morphoErrorsModule, OUTPUTS } from '../../scripts/gen-protocol-errors.ts';

describe('the protocols’ error tables', () => {
  it('are what scripts/gen-protocol-errors.ts makes of the protocols’ own sources now (regenerate after an upgrade)', () => {
    expect(readFileSync(OUTPUTS.aave, 'utf8')).toBe(aaveErrorsModule(readFileSync(AAVE_ERRORS_SOURCE(), 'utf8')));
    expect(readFileSync(OUTPUTS.morpho, 'utf8')).toBe(morphoErrorsModule(readFileSync(MORPHO_ERRORS_SOURCE(), 'utf8')));
  });
});
