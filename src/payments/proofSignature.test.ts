import { hashMessage, serializeErc6492Signature, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainUnderTest, freshSecret } from '../../test/support/chainUnderTest.ts';
import { createChainWorker, type LocalChainWorker } from '../chain/worker/index.ts';
import { erc1271WalletDeployData } from '../devnet/contracts.ts';
import { isPayerSignature, proofMessage } from './proofSignature.ts';

describe('a payer’s signature over a proof (devnet)', () => {
  const env = chainUnderTest('base');
  let worker: LocalChainWorker;
  const message = proofMessage({ chain: 'base', txHash: `0x${'AB'.repeat(32)}`, client: 'k0', requestId: 'req-1' });

  beforeAll(async () => {
    worker = await createChainWorker(env.config, { serviceSecret: freshSecret() });
  });
  afterAll(async () => {
    await worker?.close();
  });

  it('the message names the chain, the transaction (lower case) and the request, or the agent when no request is named', () => {
    expect(message).toBe(`agent-wallet payment proof\nchain: base\ntransaction: 0x${'ab'.repeat(32)}\nclient: k0\nrequest: req-1`);
    expect(proofMessage({ chain: 'ethereum', txHash: '0x01', client: 'k0', agentId: 'bot' }).split('\n')[4]).toBe('agent: bot');
  });

  it('an account’s EIP-191 signature is its own, and nobody else’s', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const other = privateKeyToAccount(generatePrivateKey());
    const signature = await payer.signMessage({ message });
    expect(await isPayerSignature(worker, payer.address, message, signature)).toBe(true);
    expect(await isPayerSignature(worker, other.address, message, signature)).toBe(false);
    expect(await isPayerSignature(worker, payer.address, `${message} `, signature)).toBe(false);
    expect(await isPayerSignature(worker, payer.address, message, '0x1234')).toBe(false);
    // An ERC-6492 suffix around bytes that decode to nothing: no signature, not an error.
    const magic = '6492'.repeat(16);
    expect(await isPayerSignature(worker, payer.address, message, `0x${'00'.repeat(10)}${magic}`)).toBe(false);
    expect(await isPayerSignature(worker, payer.address, message, `0x${magic}`)).toBe(false);
  });

  it('a contract wallet’s is what its ERC-1271 isValidSignature says, ERC-6492-wrapped or not', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const receipt = await env.funded.sendTransactionSync({ data: erc1271WalletDeployData(owner.address) });
    const wallet = receipt.contractAddress!;
    const signature: Hex = await owner.sign({ hash: hashMessage(message) });
    expect(await isPayerSignature(worker, wallet, message, signature)).toBe(true);
    const wrapped = serializeErc6492Signature({ address: wallet, data: '0x', signature });
    expect(await isPayerSignature(worker, wallet, message, wrapped)).toBe(true);
    const stranger = privateKeyToAccount(generatePrivateKey());
    expect(await isPayerSignature(worker, wallet, message, await stranger.sign({ hash: hashMessage(message) }))).toBe(false);
  });
});
