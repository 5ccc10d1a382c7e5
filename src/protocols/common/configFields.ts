import { z } from 'zod';

/** The field types of the families' configuration sections (config files and the devnet's manifest). */
export const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/) as unknown as z.ZodType<`0x${string}`>;
/** A decimal string of a non-negative integer (a uint256 in config files, where a JSON number would lose digits). */
export const UintString = z.string().regex(/^(0|[1-9][0-9]*)$/);
