import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { recoverMessageAddress, slice, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startErc7677Server, type Erc7677Server } from '../../../test/support/erc7677Server.ts';
import { testDevnet } from '../../../test/support/env.ts';
import { freePort } from '../../../test/support/net.ts';
import { ChainError } from '../errors.ts';
import { getSponsorshipHash, parseSponsorshipWindow } from '../paymaster.ts';
import { createErc7677Sponsor } from './erc7677.ts';
import type { UnsponsoredOperation } from './types.ts';

// The ERC-7677 client against the independent test server (test/support/erc7677Server.ts) on the devnet's base
// chain, and against servers that answer wrong or not at all.
const devnet = testDevnet();
const c = devnet.chain('base');
const OP: UnsponsoredOperation = {
  sender: '0x1111111111111111111111111111111111111111',
  nonce: 5n,
  callData: '0xd09de08a',
  callGasLimit: 100_000n,
  verificationGasLimit: 70_000n,
  preVerificationGas: 60_000n,
  maxFeePerGas: 2_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
};

/** The thrown ChainError of `p` (fails the test when `p` resolves). */
async function chainErrorOf(p: Promise<unknown>): Promise<ChainError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  expect(e).toBeInstanceOf(ChainError);
  return e as ChainError;
}

describe('ERC-7677 client against the test paymaster service', () => {
  let server: Erc7677Server;
  const sponsor = (over: { chainId?: number; paymaster?: Address } = {}) =>
    createErc7677Sponsor({ url: server.url, chainId: over.chainId ?? c.chainId, entryPoint: c.entryPoint, paymaster: over.paymaster ?? server.paymaster, context: { policy: 'test' } });
  beforeAll(async () => {
    server = await startErc7677Server('base');
  }, 60_000);
  afterAll(async () => server?.close());

  it('stub data: the second paymaster, its gas limits, a stub of the final size; not final', async () => {
    const stub = await sponsor().stub(OP);
    expect(stub).toMatchObject({ paymaster: server.paymaster, paymasterVerificationGasLimit: 60_000n, paymasterPostOpGasLimit: 0n, isFinal: false });
    expect((stub.paymasterData.length - 2) / 2).toBe(64 + 65);
  });

  it('final data: the server\'s signer signed the VerifyingPaymaster hash of the operation as given', async () => {
    const s = sponsor();
    const stub = await s.stub(OP);
    const op = { ...OP, paymaster: stub.paymaster, paymasterVerificationGasLimit: stub.paymasterVerificationGasLimit, paymasterPostOpGasLimit: stub.paymasterPostOpGasLimit };
    const final = await s.final(op, { validUntil: 0, validAfter: 0 });
    expect(final.paymaster).toBe(server.paymaster);
    const window = parseSponsorshipWindow(final.paymasterData)!;
    expect(window.validUntil).toBeGreaterThan(Math.floor(Date.now() / 1000));
    // Our off-chain hash (paymaster.ts) and the server's on-chain getHash agree, and the signer is the server's own.
    const hash = getSponsorshipHash({ userOperation: op, chainId: c.chainId, paymaster: server.paymaster, window });
    const signer = await recoverMessageAddress({ message: { raw: hash }, signature: slice(final.paymasterData, 64) as Hex });
    expect(signer).toBe(server.signer);
  });

  it('a refusal is simulation_reverted with the service\'s message, naming the origin but not the key in the URL', async () => {
    server.refuse('policy: monthly budget spent');
    try {
      const e = await chainErrorOf(sponsor().stub(OP));
      expect(e.code).toBe('simulation_reverted');
      expect(e.message).toContain('policy: monthly budget spent');
      expect(e.message).toContain(new URL(server.url).host);
      expect(e.message).not.toContain('test-api-key');
    } finally {
      server.refuse(undefined);
    }
  });

  it('another chain id is refused by the server', async () => {
    const e = await chainErrorOf(sponsor({ chainId: 999_999 }).stub(OP));
    expect(e.code).toBe('simulation_reverted');
    expect(e.message).toMatch(/chain 0xf423f is not supported/);
  });

  it('an answer for another paymaster than the configured one is refused', async () => {
    const e = await chainErrorOf(sponsor({ paymaster: c.paymaster }).stub(OP));
    expect(e.code).toBe('simulation_reverted');
    expect(e.message).toContain(`answered for paymaster ${server.paymaster}`);
  });
});

describe('ERC-7677 client against a service that answers wrong or not at all', () => {
  let answer: { status: number; body: string } = { status: 200, body: '' };
  let bad: Server;
  let url: string;
  beforeAll(async () => {
    bad = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body));
    });
    await new Promise<void>((r) => bad.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(bad.address() as AddressInfo).port}/key/secret-api-key`;
  });
  afterAll(() => new Promise<void>((r) => bad.close(() => r())));
  const client = (u = url) => createErc7677Sponsor({ url: u, chainId: c.chainId, entryPoint: c.entryPoint, paymaster: c.paymaster, timeoutMs: 2_000 });
  const rpc = (result: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, result });

  it.each([
    ['HTTP 502 with a proxy\'s page', 502, '<html>bad gateway</html>'],
    ['not JSON-RPC', 200, '{"hello":1}'],
    ['a stub without paymasterPostOpGasLimit (ERC-7677 requires it for v0.7)', 200, rpc({ paymaster: c.paymaster, paymasterData: '0x' })],
    ['a malformed paymaster address', 200, rpc({ paymaster: '0x1234', paymasterData: '0x', paymasterPostOpGasLimit: '0x0' })],
    ['paymasterData of odd length', 200, rpc({ paymaster: c.paymaster, paymasterData: '0xabc', paymasterPostOpGasLimit: '0x0' })],
  ])('%s: rpc_unavailable', async (_, status, body) => {
    answer = { status, body };
    const e = await chainErrorOf(client().stub(OP));
    expect(e.code).toBe('rpc_unavailable');
    expect(e.message).not.toContain('secret-api-key');
  });

  it('a well-formed stub passes, the verification limit defaulting to the VerifyingPaymaster\'s', async () => {
    answer = { status: 200, body: rpc({ paymaster: c.paymaster.toLowerCase(), paymasterData: '0x01', paymasterPostOpGasLimit: 1000, isFinal: true }) };
    expect(await client().stub(OP)).toEqual({ paymaster: c.paymaster, paymasterData: '0x01', paymasterVerificationGasLimit: 45_000n, paymasterPostOpGasLimit: 1000n, isFinal: true });
  });

  it('final data with other gas limits than the stub\'s is refused (its signature would not cover the operation)', async () => {
    answer = { status: 200, body: rpc({ paymaster: c.paymaster, paymasterData: '0x01', paymasterVerificationGasLimit: '0x1' }) };
    const e = await chainErrorOf(client().final({ ...OP, paymaster: c.paymaster, paymasterVerificationGasLimit: 45_000n, paymasterPostOpGasLimit: 0n }, { validUntil: 0, validAfter: 0 }));
    expect(e.code).toBe('simulation_reverted');
  });

  it('a service that is down: rpc_unavailable', async () => {
    const e = await chainErrorOf(client(`http://127.0.0.1:${await freePort()}/key/secret-api-key`).stub(OP));
    expect(e.code).toBe('rpc_unavailable');
    expect(e.message).not.toContain('secret-api-key');
  });
});
