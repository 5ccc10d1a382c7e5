import { endpointsOf } from '../types.ts';

/** The declarations of this family's endpoints (lend-b-v3: Compound v3 on base). */
export const { read: defineRead, action: defineAction } = endpointsOf<'compoundV3'>();
