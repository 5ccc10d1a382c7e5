import { describe, expect, it } from 'vitest';
import { createChainClient } from './client.ts';
import { entryPoint07Abi } from './abi.ts';
import { readEntryPointNonce } from './entryPointNonce.ts';
import { chainUnderTest } from '../../test/support/chainUnderTest.ts';

describe('readEntryPointNonce (devnet)', () => {
  const env = chainUnderTest();
  const client = createChainClient(env.config);

  it('reads what EntryPoint.getNonce answers, for a sender with operations and one without', async () => {
    // An executor has sent bundles, not operations; the funded account neither: both are 0 unless another test
    // used them as a sender, which is why the answer is compared with viem's readContract, not a constant.
    for (const sender of [env.funded.account.address, env.config.beneficiary]) {
      for (const key of [0n, 5n]) {
        const viaViem = await env.client.readContract({ address: env.config.entryPoint, abi: entryPoint07Abi, functionName: 'getNonce', args: [sender, key] });
        expect(await readEntryPointNonce(client, env.config.entryPoint, sender, key)).toBe(viaViem);
      }
    }
    // Key 5 of any sender starts at 5 << 64: the key is really sent.
    expect(await readEntryPointNonce(client, env.config.entryPoint, env.funded.account.address, 5n)).toBe(5n << 64n);
  });

  it('refuses an address that is not an EntryPoint', async () => {
    await expect(readEntryPointNonce(client, '0x00000000000000000000000000000000000000e1', env.funded.account.address)).rejects.toThrow(
      /is it an EntryPoint/,
    );
  });
});
