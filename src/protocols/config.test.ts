import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { protocolsByChain, ProtocolsConfigError, protocolsConfigSchema } from './config.ts';
import { FAMILIES } from './index.ts';

const comet = `0x${'c0'.repeat(20)}`;

describe("a chain's protocols configuration", () => {
  it('is one section per family, each validated by the schema the family declares', () => {
    const schema = protocolsConfigSchema(FAMILIES) as unknown as z.ZodObject;
    expect(Object.keys(schema.shape).sort()).toEqual(FAMILIES.map((f) => f.key).sort());
    for (const f of FAMILIES) expect((schema.shape[f.key] as z.ZodOptional).unwrap()).toBe(f.config);
  });

  it('takes what each family configures, and nothing for a family not configured there', () => {
    const byChain = protocolsByChain(
      [
        { name: 'base', protocols: { compoundV3: { markets: [{ name: 'cUSDCv3', comet }] } } },
        { name: 'arbitrum', protocols: {} },
      ],
      FAMILIES,
    );
    expect(byChain.get('base')).toEqual({ compoundV3: { markets: [{ name: 'cUSDCv3', comet }] } });
    expect(byChain.get('arbitrum')).toEqual({});
  });

  it('refuses a key no family declares (a typo, or a protocol this build does not serve), naming the chain and the key', () => {
    const run = () => protocolsByChain([{ name: 'base', protocols: { compoundv3: { markets: [] } } }], FAMILIES);
    expect(run).toThrow(ProtocolsConfigError);
    expect(run).toThrow('chain base: protocols: Unrecognized key: "compoundv3"; this build serves aaveV3, compoundV3, morphoBlue');
  });

  it("refuses a section its family's schema refuses, with the path", () => {
    expect(() => protocolsByChain([{ name: 'base', protocols: { compoundV3: { markets: [{ name: 'x', comet: '0x12' }] } } }], FAMILIES)).toThrow(
      /chain base: protocols\.compoundV3\.markets\.0\.comet/,
    );
  });

  it('takes a family a test adds, with its own section', () => {
    const extra = { key: 'extra', config: z.object({ at: z.string() }) };
    expect(protocolsByChain([{ name: 'base', protocols: { extra: { at: 'x' } } }], [...FAMILIES, extra]).get('base')).toEqual({ extra: { at: 'x' } });
  });
});
