import { endpointsOf } from '../types.ts';

/** The declarations of this family's endpoints (lend-a-v3: Aave v3 on ethereum). */
export const { read: defineRead, action: defineAction } = endpointsOf<'aaveV3'>();
