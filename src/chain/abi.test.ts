import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { toEventSelector, toFunctionSelector, type Abi, type AbiEvent, type AbiFunction } from 'viem';
import { entryPoint07Abi, simpleAccountAbi, simpleAccountFactoryAbi, verifyingPaymasterAbi } from './abi.ts';

const require = createRequire(import.meta.url);
const artifact = (name: string): Abi =>
  JSON.parse(readFileSync(require.resolve(`@account-abstraction/contracts/artifacts/${name}.json`), 'utf8')).abi as Abi;

const functionSelectors = (abi: Abi) => new Set(abi.filter((x): x is AbiFunction => x.type === 'function').map((f) => toFunctionSelector(f)));
const eventSelectors = (abi: Abi) => new Set(abi.filter((x): x is AbiEvent => x.type === 'event').map((e) => toEventSelector(e)));

describe('hand-written ABIs match the @account-abstraction/contracts 0.7.0 artifacts', () => {
  it.each([
    ['SimpleAccount', simpleAccountAbi],
    ['SimpleAccountFactory', simpleAccountFactoryAbi],
    ['VerifyingPaymaster', verifyingPaymasterAbi],
  ] as const)('%s', (name, abi) => {
    const fromArtifact = functionSelectors(artifact(name));
    for (const selector of functionSelectors(abi as Abi)) expect(fromArtifact).toContain(selector);
  });

  it("viem's EntryPoint v0.7 ABI has the artifact's functions, events and errors", () => {
    const ep = artifact('EntryPoint');
    const fns = functionSelectors(entryPoint07Abi as Abi);
    for (const name of ['handleOps', 'getNonce', 'getUserOpHash', 'balanceOf']) {
      const f = ep.find((x): x is AbiFunction => x.type === 'function' && x.name === name)!;
      expect(fns).toContain(toFunctionSelector(f));
    }
    const events = eventSelectors(entryPoint07Abi as Abi);
    for (const e of eventSelectors(ep)) expect(events).toContain(e);
  });
});
