import { z } from 'zod';
import { Address } from '../common/configFields.ts';

/** Compound v3: one Comet per base asset (the base token, collaterals and prices are read from the Comet). */
export const CompoundV3ConfigSchema = z.object({
  markets: z
    .array(
      z.object({
        /** What callers name the market by, e.g. `cUSDCv3`. */
        name: z.string().min(1),
        comet: Address,
      }),
    )
    .min(1),
});
export type CompoundV3Config = z.infer<typeof CompoundV3ConfigSchema>;
