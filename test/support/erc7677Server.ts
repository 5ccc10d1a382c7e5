/**
 * An independent ERC-7677 paymaster service for tests: a real HTTP JSON-RPC server (node:http) answering
 * pm_getPaymasterStubData and pm_getPaymasterData for a second VerifyingPaymaster it deploys on one devnet chain with
 * its own random signer key, which the agent-wallet service never holds (it is given only the URL). It asks the
 * paymaster contract itself for the hash it signs (`getHash`), so it shares no hashing code with the service.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { concat, encodeAbiParameters, getAddress, numberToHex, parseAbi, parseEther, type Address, type Hex } from 'viem';
import { toPackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { ChainName } from '../../src/config/chains.ts';
import { devnetChain, devnetWalletClient } from '../../src/devnet/clients.ts';
import { paymasterDeployData, verifyingPaymasterAbi } from '../../src/devnet/contracts.ts';
import { testDevnet } from './env.ts';

const getHashAbi = parseAbi([
  'struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }',
  'function getHash(PackedUserOperation userOp, uint48 validUntil, uint48 validAfter) view returns (bytes32)',
]);

const VERIFICATION_GAS = 60_000n;

export interface Erc7677Server {
  url: string;
  chain: ChainName;
  /** The second VerifyingPaymaster this server signs for. */
  paymaster: Address;
  /** Its verifying signer: a key only this server holds. */
  signer: Address;
  /** The requests answered, by method (a refused one counts too). */
  calls: Record<string, number>;
  /** From now on, refuse every request with this message (a policy saying no); undefined: sponsor again. */
  refuse(message: string | undefined): void;
  close(): Promise<void>;
}

type Wire = Record<string, unknown>;
const q = (v: unknown): bigint => BigInt(v as string);

/** A v0.7 UserOperation from its JSON-RPC form (hex quantities). */
function fromWire(w: Wire): UserOperation<'0.7'> {
  return {
    sender: getAddress(w.sender as string),
    nonce: q(w.nonce),
    ...(w.factory ? { factory: getAddress(w.factory as string), factoryData: w.factoryData as Hex } : {}),
    callData: w.callData as Hex,
    callGasLimit: q(w.callGasLimit),
    verificationGasLimit: q(w.verificationGasLimit),
    preVerificationGas: q(w.preVerificationGas),
    maxFeePerGas: q(w.maxFeePerGas),
    maxPriorityFeePerGas: q(w.maxPriorityFeePerGas),
    signature: '0x',
  };
}

/**
 * Deploys the second paymaster on `chain` from a fresh anvil_setBalance'd account (10 ETH deposit, 1 ETH stake) and
 * serves ERC-7677 for it. `validForSeconds`: the window of each sponsorship.
 */
export async function startErc7677Server(chain: ChainName, opts: { validForSeconds?: number } = {}): Promise<Erc7677Server> {
  const devnet = testDevnet();
  const c = devnet.chain(chain);
  const client = devnet.publicClient(chain);
  const signerKey = generatePrivateKey();
  const signer = privateKeyToAccount(signerKey);
  const ownerKey = generatePrivateKey();
  const owner = privateKeyToAccount(ownerKey).address;
  await client.request({ method: 'anvil_setBalance' as never, params: [owner, numberToHex(parseEther('100'))] as never });
  const wallet = devnetWalletClient(devnetChain(c), ownerKey);
  const deployed = await client.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ data: paymasterDeployData(signer.address) }) });
  const paymaster = getAddress(deployed.contractAddress!);
  for (const hash of [
    await wallet.writeContract({ address: paymaster, abi: verifyingPaymasterAbi, functionName: 'deposit', value: parseEther('10') }),
    await wallet.writeContract({ address: paymaster, abi: verifyingPaymasterAbi, functionName: 'addStake', args: [86_400], value: parseEther('1') }),
  ]) {
    const r = await client.waitForTransactionReceipt({ hash });
    if (r.status !== 'success') throw new Error(`funding the second paymaster failed: ${hash}`);
  }

  // The stub's signature: a real one by a throwaway key, so it recovers to another address and validation fails
  // softly (SIG_VALIDATION_FAILED). One that does not recover at all (r ≥ n) makes OpenZeppelin's ECDSA revert (AA33),
  // and a bundler then refuses to estimate the operation.
  const STUB_SIGNATURE = await privateKeyToAccount(generatePrivateKey()).signMessage({ message: 'stub' });
  const calls: Record<string, number> = {};
  let refusal: string | undefined;
  const validForSeconds = opts.validForSeconds ?? 600;

  async function answer(method: string, params: unknown[]): Promise<{ result: unknown } | { error: { code: number; message: string } }> {
    calls[method] = (calls[method] ?? 0) + 1;
    if (method !== 'pm_getPaymasterStubData' && method !== 'pm_getPaymasterData') return { error: { code: -32601, message: `no method ${method}` } };
    const [wire, entryPoint, chainId] = params as [Wire, string, string, unknown];
    if (typeof wire !== 'object' || wire === null) return { error: { code: -32602, message: 'the user operation is missing' } };
    if (typeof entryPoint !== 'string' || entryPoint.toLowerCase() !== c.entryPoint.toLowerCase()) return { error: { code: -32602, message: `entry point ${entryPoint} is not supported` } };
    if (typeof chainId !== 'string' || q(chainId) !== BigInt(c.chainId)) return { error: { code: -32602, message: `chain ${chainId} is not supported` } };
    if (refusal) return { error: { code: -32000, message: refusal } };
    const limits = { paymasterVerificationGasLimit: VERIFICATION_GAS, paymasterPostOpGasLimit: 0n };
    if (method === 'pm_getPaymasterStubData') {
      const window = encodeAbiParameters([{ type: 'uint48' }, { type: 'uint48' }], [2 ** 40, 0]);
      return {
        result: {
          paymaster,
          paymasterData: concat([window, STUB_SIGNATURE]),
          paymasterVerificationGasLimit: numberToHex(limits.paymasterVerificationGasLimit),
          paymasterPostOpGasLimit: numberToHex(limits.paymasterPostOpGasLimit),
          isFinal: false,
          sponsor: { name: 'test sponsor' },
        },
      };
    }
    // pm_getPaymasterData: sign the operation as given, with the gas limits of the stub it was priced with.
    const op = { ...fromWire(wire), paymaster, ...limits, paymasterData: '0x' as Hex };
    const latest = await client.getBlock();
    const validUntil = Number(latest.timestamp) + validForSeconds;
    const hash = await client.readContract({ address: paymaster, abi: getHashAbi, functionName: 'getHash', args: [toPackedUserOperation(op), validUntil, 0] });
    const signature = await signer.signMessage({ message: { raw: hash } });
    const window = encodeAbiParameters([{ type: 'uint48' }, { type: 'uint48' }], [validUntil, 0]);
    return { result: { paymaster, paymasterData: concat([window, signature]) } };
  }

  const server = createServer((req, res) => {
    void (async () => {
      let id: unknown = null;
      let out: object;
      try {
        const body = JSON.parse(await read(req)) as { id?: unknown; method?: string; params?: unknown[] };
        id = body.id ?? null;
        out = await answer(String(body.method), Array.isArray(body.params) ? body.params : []);
      } catch (e) {
        out = { error: { code: -32603, message: (e as Error).message } };
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, ...out }));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    // A path with a key in it, as hosted services have: the service must log the origin only.
    url: `http://127.0.0.1:${port}/rpc/v1/test-api-key-${signerKey.slice(2, 10)}`,
    chain,
    paymaster,
    signer: signer.address,
    calls,
    refuse(message) {
      refusal = message;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
