import { getAddress } from 'viem';
import { z } from 'zod';
import { CHAIN_DESCRIPTION, ChainOut, ChainSchema, TargetContract, text } from './common.ts';

/**
 * The faucet's HTTP contract: what POST /api/drip (and the page's form) accepts, what it and GET /api/info
 * answer. The faucet (src/faucet) serves it; the agents' client (src/client/faucet.ts) reads its answers. Built
 * from the API's own field schemas so chain names, their aliases and the address rule are the same as on the
 * service; errors have the service's body `{ error, message, ... }`.
 */

const ADDRESS_RULE = 'must be a 0x-prefixed 20-byte hex address: all lowercase, all uppercase, or mixed case with a valid EIP-55 checksum';
const INVALID_ADDRESS = { code: 'invalid_address' };

/**
 * A smart-wallet address (`smart_wallet_address` of GET /wallet): the rule of the API's target_contract, under
 * the code `invalid_address`, whatever the way it is wrong (a number, bad hex, a wrong checksum); the zero
 * address is refused too (the token refuses to send there). Answers carry the EIP-55 form.
 */
export const WalletAddress = z
  .preprocess(
    (v, ctx) => {
      if (v === undefined || typeof v === 'string') return v;
      ctx.addIssue({ code: 'custom', message: ADDRESS_RULE, params: INVALID_ADDRESS, input: v });
      return z.NEVER;
    },
    text('a 0x-prefixed address')
      .refine((v) => TargetContract.safeParse(v).success, { message: ADDRESS_RULE, params: INVALID_ADDRESS })
      .refine((v) => !/^0x0{40}$/.test(v), { message: 'must not be the zero address', params: INVALID_ADDRESS })
      .transform((v) => getAddress(v)),
  )
  .meta({
    description:
      'The smart wallet to fund: `smart_wallet_address` of GET /wallet. 0x-prefixed 20-byte hex, all lowercase, all uppercase, ' +
      'or mixed case with a valid EIP-55 checksum (a wrong checksum is 400 invalid_address).',
    pattern: '^0x[0-9a-fA-F]{40}$',
    examples: ['0x4a3b5f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8'],
  });

export const DripBodySchema = z.object({
  address: WalletAddress,
  chain: ChainSchema.default('ethereum').meta({ description: `${CHAIN_DESCRIPTION} Default: ethereum.` }),
});
export type DripBody = z.infer<typeof DripBodySchema>;

export const DripResultSchema = z.object({
  chain: ChainOut,
  address: z.string().meta({ description: 'The recipient, EIP-55 checksummed' }),
  token: z.literal('aUSD'),
  amount: z.string().meta({ description: 'aUSD sent, in whole tokens', examples: ['100'] }),
  amount_raw: z.string().meta({ description: 'aUSD sent, in the smallest unit (6 decimals)', examples: ['100000000'] }),
  tx_hash: z.string(),
  block_number: z.string(),
  balance: z.string().nullable().meta({ description: "The recipient's aUSD balance at the drip's block, in whole tokens; null if the chain did not answer that read" }),
  balance_raw: z.string().nullable().meta({ description: 'The same balance in the smallest unit' }),
});
export type DripResult = z.infer<typeof DripResultSchema>;

const LimitSchema = z.object({
  burst: z.int().meta({ description: 'Drips allowed at once after a quiet spell' }),
  every_seconds: z.number().meta({ description: 'Then one more drip every this many seconds' }),
});

export const FaucetInfoSchema = z.object({
  token: z.literal('aUSD'),
  amount: z.string().meta({ description: 'aUSD per drip, in whole tokens' }),
  faucet_address: z.string().meta({ description: 'The account the tokens come from' }),
  default_chain: ChainOut.meta({ description: 'The chain of a drip that names none' }),
  chains: z.array(
    z.object({
      chain: ChainOut,
      network: z.string(),
      chain_id: z.int(),
      token_address: z.string(),
      decimals: z.int(),
      amount_raw: z.string().meta({ description: 'aUSD per drip on this chain, in the smallest unit' }),
    }),
  ),
  limits: z.object({
    per_address: LimitSchema.meta({ description: 'Per recipient address and chain' }),
    per_client: LimitSchema.meta({ description: 'Per client address (IPv4 address or IPv6 /64), over every recipient and chain' }),
  }),
});
export type FaucetInfo = z.infer<typeof FaucetInfoSchema>;
