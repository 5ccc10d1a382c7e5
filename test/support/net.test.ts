import { describe, expect, it } from 'vitest';
import { freePort, freePorts } from './net.ts';

describe('freePorts', () => {
  it('never hands out a port twice in one process, across calls', async () => {
    const seen: number[] = [];
    for (let i = 0; i < 40; i++) seen.push(await freePort());
    seen.push(...(await freePorts(40)));
    expect(new Set(seen).size).toBe(seen.length);
  });
});
