/**
 * contracts/TestStablecoin.sol on the run's devnet: EIP-3009 in both signature forms, with EOA and contract
 * (ERC-1271) payers, as x402's `exact` scheme uses it. USDT stays a plain ERC-20.
 */
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, test } from 'vitest';
import {
  BaseError,
  ContractFunctionRevertedError,
  concat,
  decodeEventLog,
  domainSeparator,
  numberToHex,
  parseSignature,
  toHex,
  type Address,
  type Hex,
  type LocalAccount,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { testDevnet } from '../../test/support/env.ts';
import { EIP3009_AUTHORIZATION_FIELDS } from '../../test/support/x402.ts';
import {
  eip3009TokenAbi,
  erc1271WalletAbi,
  erc1271WalletDeployData,
  simpleAccountFactoryAbi,
  TEST_STABLECOIN_EIP712_VERSION,
  TEST_TOKENS,
  testStablecoinAbi,
} from './contracts.ts';

const devnet = testDevnet();
const CHAIN = 'base';
const chain = devnet.chain(CHAIN);
const client = devnet.publicClient(CHAIN);
/** Submits authorizations and mints: any funded account pays the gas; the payers below hold no ETH. */
const relayer = devnet.walletClient(CHAIN, 2);
const tokenOf = (symbol: string) => {
  const token = chain.tokens.find((t) => t.symbol === symbol);
  if (!token) throw new Error(`no ${symbol} on ${CHAIN}`);
  return { ...token, name: TEST_TOKENS.find((t) => t.symbol === symbol)!.name };
};
const usdc = tokenOf('USDC');

type Kind = 'TransferWithAuthorization' | 'ReceiveWithAuthorization';
type Authorization = {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
};

const domain = { name: usdc.name, version: TEST_STABLECOIN_EIP712_VERSION, chainId: chain.chainId, verifyingContract: usdc.address };

const signAuthorization = (signer: LocalAccount, auth: Authorization, kind: Kind = 'TransferWithAuthorization'): Promise<Hex> =>
  signer.signTypedData({ domain, types: { [kind]: EIP3009_AUTHORIZATION_FIELDS }, primaryType: kind, message: auth });
const signCancel = (signer: LocalAccount, authorizer: Address, nonce: Hex): Promise<Hex> =>
  signer.signTypedData({
    domain,
    types: { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
    primaryType: 'CancelAuthorization',
    message: { authorizer, nonce },
  });

const randomNonce = (): Hex => toHex(randomBytes(32));
const chainNow = async (): Promise<bigint> => (await client.getBlock()).timestamp;
const balanceOf = (holder: Address): Promise<bigint> =>
  client.readContract({ address: usdc.address, abi: testStablecoinAbi, functionName: 'balanceOf', args: [holder] });
const used = (authorizer: Address, nonce: Hex): Promise<boolean> =>
  client.readContract({ address: usdc.address, abi: eip3009TokenAbi, functionName: 'authorizationState', args: [authorizer, nonce] });

/** A payer with tokens and no ETH: an authorization is all it ever sends. */
async function newPayer(amount = 1_000_000n): Promise<LocalAccount> {
  const payer = privateKeyToAccount(generatePrivateKey());
  await relayer.writeContractSync({ address: usdc.address, abi: testStablecoinAbi, functionName: 'mint', args: [payer.address, amount] });
  return payer;
}

async function authorization(from: Address, overrides: Partial<Authorization> = {}): Promise<Authorization> {
  const now = await chainNow();
  return { from, to: privateKeyToAccount(generatePrivateKey()).address, value: 1234n, validAfter: 0n, validBefore: now + 3600n, nonce: randomNonce(), ...overrides };
}

const args = (a: Authorization) => [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce] as const;
const vrs = (signature: Hex) => {
  const { v, r, s } = parseSignature(signature);
  return [Number(v), r, s] as const;
};

/** The revert reason of a transferWithAuthorization in the `bytes` form, as an eth_call (nothing is mined). */
async function refusal(a: Authorization, signature: Hex): Promise<string | undefined> {
  const error = await client
    .simulateContract({ address: usdc.address, abi: eip3009TokenAbi, functionName: 'transferWithAuthorization', args: [...args(a), signature], account: relayer.account })
    .then(() => undefined, (e: unknown) => e);
  return revertReason(error);
}

function revertReason(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const reverted = error.walk((e) => e instanceof ContractFunctionRevertedError);
  return reverted instanceof ContractFunctionRevertedError ? reverted.reason : undefined;
}

describe('TestStablecoin: EIP-3009 on the devnet', () => {
  test('USDC and aUSD carry an EIP-712 domain (ERC-5267) with version "2"; USDT is a plain ERC-20', async () => {
    for (const symbol of ['USDC', 'aUSD']) {
      const token = tokenOf(symbol);
      const [fields, name, version, chainId, verifyingContract, salt, extensions] = await client.readContract({
        address: token.address,
        abi: eip3009TokenAbi,
        functionName: 'eip712Domain',
      });
      expect({ fields, name, version, chainId, verifyingContract, salt, extensions }).toEqual({
        fields: '0x0f',
        name: token.name,
        version: '2',
        chainId: BigInt(chain.chainId),
        verifyingContract: token.address,
        salt: numberToHex(0, { size: 32 }),
        extensions: [],
      });
      const separator = await client.readContract({ address: token.address, abi: eip3009TokenAbi, functionName: 'DOMAIN_SEPARATOR' });
      expect(separator).toBe(domainSeparator({ domain: { name: token.name, version: '2', chainId: chain.chainId, verifyingContract: token.address } }));
    }
    const usdt = tokenOf('USDT');
    const noVersion = await client.readContract({ address: usdt.address, abi: eip3009TokenAbi, functionName: 'version' }).catch((e: unknown) => e);
    expect(noVersion).toBeInstanceOf(BaseError);
    // The same code on every chain at the same address: the domain still differs by chain id.
    const other = devnet.chain('arbitrum');
    const otherSeparator = await devnet
      .publicClient('arbitrum')
      .readContract({ address: other.tokens.find((t) => t.symbol === 'USDC')!.address, abi: eip3009TokenAbi, functionName: 'DOMAIN_SEPARATOR' });
    expect(otherSeparator).not.toBe(domainSeparator({ domain }));
  });

  test('transferWithAuthorization (v, r, s): anyone submits, exactly the value moves, the nonce is spent', async () => {
    const payer = await newPayer();
    const auth = await authorization(payer.address);
    const signature = await signAuthorization(payer, auth);

    const receipt = await relayer.writeContractSync({
      address: usdc.address,
      abi: eip3009TokenAbi,
      functionName: 'transferWithAuthorization',
      args: [...args(auth), ...vrs(signature)],
    });
    expect(receipt.status).toBe('success');
    expect(await balanceOf(auth.to)).toBe(auth.value);
    expect(await balanceOf(payer.address)).toBe(1_000_000n - auth.value);
    expect(await used(payer.address, auth.nonce)).toBe(true);
    const events = receipt.logs.map((log) => decodeEventLog({ abi: [...eip3009TokenAbi, ...testStablecoinAbi], ...log }));
    expect(events.map((e) => e.eventName)).toEqual(['AuthorizationUsed', 'Transfer']);
    expect(events[0]!.args).toEqual({ authorizer: payer.address, nonce: auth.nonce });
  });

  test('transferWithAuthorization (bytes signature) moves the value too', async () => {
    const payer = await newPayer();
    const auth = await authorization(payer.address);
    const receipt = await relayer.writeContractSync({
      address: usdc.address,
      abi: eip3009TokenAbi,
      functionName: 'transferWithAuthorization',
      args: [...args(auth), await signAuthorization(payer, auth)],
    });
    expect(receipt.status).toBe('success');
    expect(await balanceOf(auth.to)).toBe(auth.value);
  });

  test('a replayed authorization is refused, in either form', async () => {
    const payer = await newPayer();
    const auth = await authorization(payer.address);
    const signature = await signAuthorization(payer, auth);
    await relayer.writeContractSync({ address: usdc.address, abi: eip3009TokenAbi, functionName: 'transferWithAuthorization', args: [...args(auth), signature] });

    expect(await refusal(auth, signature)).toBe('EIP3009: authorization is used or canceled');
    const vrsReplay = await client
      .simulateContract({
        address: usdc.address,
        abi: eip3009TokenAbi,
        functionName: 'transferWithAuthorization',
        args: [...args(auth), ...vrs(signature)],
        account: relayer.account,
      })
      .catch((e: unknown) => e);
    expect(revertReason(vrsReplay)).toBe('EIP3009: authorization is used or canceled');
    expect(await balanceOf(auth.to)).toBe(auth.value);
  });

  test('an expired or not yet valid authorization is refused', async () => {
    const payer = await newPayer();
    const now = await chainNow();
    const expired = await authorization(payer.address, { validBefore: now });
    expect(await refusal(expired, await signAuthorization(payer, expired))).toBe('EIP3009: authorization is expired');
    const early = await authorization(payer.address, { validAfter: now + 3600n, validBefore: now + 7200n });
    expect(await refusal(early, await signAuthorization(payer, early))).toBe('EIP3009: authorization is not yet valid');
  });

  test('a signature by someone else, over other terms, or malleated is refused', async () => {
    const payer = await newPayer();
    const auth = await authorization(payer.address);
    const stranger = privateKeyToAccount(generatePrivateKey());
    expect(await refusal(auth, await signAuthorization(stranger, auth))).toBe('EIP3009: invalid signature');

    const signature = await signAuthorization(payer, auth);
    expect(await refusal({ ...auth, value: auth.value + 1n }, signature)).toBe('EIP3009: invalid signature');
    expect(await refusal({ ...auth, to: stranger.address }, signature)).toBe('EIP3009: invalid signature');
    // A ReceiveWithAuthorization signature is not a TransferWithAuthorization one.
    expect(await refusal(auth, await signAuthorization(payer, auth, 'ReceiveWithAuthorization'))).toBe('EIP3009: invalid signature');

    // (r, n - s, flipped v) recovers to the same signer: EIP-2 says only the low-s twin counts.
    const { r, s, v } = parseSignature(signature);
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const twin = concat([r, numberToHex(n - BigInt(s), { size: 32 }), numberToHex(v === 27n ? 28 : 27, { size: 1 })]);
    expect(await refusal(auth, twin)).toBe('EIP3009: invalid signature');
    expect(await refusal(auth, signature)).toBeUndefined();
  });

  test('receiveWithAuthorization: only the payee may submit it', async () => {
    const payer = await newPayer();
    const payee = relayer.account.address;
    const auth = await authorization(payer.address, { to: payee });
    const signature = await signAuthorization(payer, auth, 'ReceiveWithAuthorization');

    const byOther = await client
      .simulateContract({
        address: usdc.address,
        abi: eip3009TokenAbi,
        functionName: 'receiveWithAuthorization',
        args: [...args(auth), signature],
        account: devnet.walletClient(CHAIN, 3).account,
      })
      .catch((e: unknown) => e);
    expect(revertReason(byOther)).toBe('EIP3009: caller must be the payee');

    const before = await balanceOf(payee);
    await relayer.writeContractSync({ address: usdc.address, abi: eip3009TokenAbi, functionName: 'receiveWithAuthorization', args: [...args(auth), ...vrs(signature)] });
    expect(await balanceOf(payee)).toBe(before + auth.value);
    expect(await used(payer.address, auth.nonce)).toBe(true);
  });

  test('cancelAuthorization spends the nonce without a transfer; only the authorizer can cancel', async () => {
    const payer = await newPayer();
    const auth = await authorization(payer.address);
    const transfer = await signAuthorization(payer, auth);

    const forged = await client
      .simulateContract({
        address: usdc.address,
        abi: eip3009TokenAbi,
        functionName: 'cancelAuthorization',
        args: [payer.address, auth.nonce, await signCancel(privateKeyToAccount(generatePrivateKey()), payer.address, auth.nonce)],
        account: relayer.account,
      })
      .catch((e: unknown) => e);
    expect(revertReason(forged)).toBe('EIP3009: invalid signature');

    const receipt = await relayer.writeContractSync({
      address: usdc.address,
      abi: eip3009TokenAbi,
      functionName: 'cancelAuthorization',
      args: [payer.address, auth.nonce, ...vrs(await signCancel(payer, payer.address, auth.nonce))],
    });
    expect(decodeEventLog({ abi: eip3009TokenAbi, ...receipt.logs[0]! })).toMatchObject({
      eventName: 'AuthorizationCanceled',
      args: { authorizer: payer.address, nonce: auth.nonce },
    });
    expect(await used(payer.address, auth.nonce)).toBe(true);
    expect(await refusal(auth, transfer)).toBe('EIP3009: authorization is used or canceled');
    expect(await balanceOf(payer.address)).toBe(1_000_000n);

    // The bytes form of the cancel; a canceled nonce cannot be canceled again.
    const other = await authorization(payer.address);
    await relayer.writeContractSync({
      address: usdc.address,
      abi: eip3009TokenAbi,
      functionName: 'cancelAuthorization',
      args: [payer.address, other.nonce, await signCancel(payer, payer.address, other.nonce)],
    });
    expect(await used(payer.address, other.nonce)).toBe(true);
    const again = await client
      .simulateContract({
        address: usdc.address,
        abi: eip3009TokenAbi,
        functionName: 'cancelAuthorization',
        args: [payer.address, other.nonce, await signCancel(payer, payer.address, other.nonce)],
        account: relayer.account,
      })
      .catch((e: unknown) => e);
    expect(revertReason(again)).toBe('EIP3009: authorization is used or canceled');
  });

  describe('a contract payer', () => {
    let owner: LocalAccount;
    let wallet: Address;

    beforeAll(async () => {
      owner = privateKeyToAccount(generatePrivateKey());
      const receipt = await relayer.sendTransactionSync({ data: erc1271WalletDeployData(owner.address) });
      wallet = receipt.contractAddress!;
      expect(await client.readContract({ address: wallet, abi: erc1271WalletAbi, functionName: 'owner' })).toBe(owner.address);
      await relayer.writeContractSync({ address: usdc.address, abi: testStablecoinAbi, functionName: 'mint', args: [wallet, 1_000_000n] });
    });

    test('pays through ERC-1271 isValidSignature, in both forms', async () => {
      // The owner signs the wallet's authorization; the token asks the wallet whether that signature is its own.
      const first = await authorization(wallet);
      await relayer.writeContractSync({
        address: usdc.address,
        abi: eip3009TokenAbi,
        functionName: 'transferWithAuthorization',
        args: [...args(first), ...vrs(await signAuthorization(owner, first))],
      });
      const second = await authorization(wallet);
      await relayer.writeContractSync({
        address: usdc.address,
        abi: eip3009TokenAbi,
        functionName: 'transferWithAuthorization',
        args: [...args(second), await signAuthorization(owner, second)],
      });
      expect(await balanceOf(first.to)).toBe(first.value);
      expect(await balanceOf(second.to)).toBe(second.value);
      expect(await balanceOf(wallet)).toBe(1_000_000n - first.value - second.value);
    });

    test('is refused when its isValidSignature says no', async () => {
      const auth = await authorization(wallet);
      expect(await refusal(auth, await signAuthorization(privateKeyToAccount(generatePrivateKey()), auth))).toBe('EIP3009: invalid signature');
      expect(await refusal(auth, '0x1234')).toBe('EIP3009: invalid signature');
    });

    test("a SimpleAccount v0.7 cannot pay: it implements no ERC-1271, so its owner's signature is refused", async () => {
      const owner = privateKeyToAccount(generatePrivateKey());
      const { request, result: account } = await client.simulateContract({
        address: chain.simpleAccountFactory,
        abi: simpleAccountFactoryAbi,
        functionName: 'createAccount',
        args: [owner.address, 0n],
        account: relayer.account,
      });
      await relayer.writeContractSync(request);
      expect(await client.getCode({ address: account })).not.toBe(undefined);
      await relayer.writeContractSync({ address: usdc.address, abi: testStablecoinAbi, functionName: 'mint', args: [account, 1_000_000n] });

      const auth = await authorization(account);
      expect(await refusal(auth, await signAuthorization(owner, auth))).toBe('EIP3009: invalid signature');
    });
  });
});
