import { endpointsOf } from '../types.ts';

/** The declarations of this family's endpoints (lend-c: Morpho Blue on base). */
export const { read: defineRead, action: defineAction } = endpointsOf<'morphoBlue'>();
