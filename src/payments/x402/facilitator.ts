import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { concat, createPublicClient, defineChain, erc20Abi, getAddress, http, numberToHex, type Address, type Hash, type Hex, type PublicClient } from 'viem';
import type { SendingAccounts, SendPurpose } from '../../chain/types.ts';
import { err, ok, type Result } from '../../lib/result.ts';
import { findAuthorizationTransaction, readAuthorizationState } from './authorizationState.ts';
import { authorizationIdentity, type AuthorizationIdentity } from './claim.ts';
import type { X402Payment } from './payment.ts';
import { refusal, X402_REASON, type X402Refusal } from './reasons.ts';
import { evmNetwork } from './requirements.ts';

export interface X402FacilitatorOptions {
  /**
   * The chains payments may arrive on, each offered as `eip155:<chainId>`: the RPC URL verification reads with,
   * and the chain worker that owns the settler account and sends settlements (accountSender.ts).
   */
  chains: readonly { chainId: number; rpcUrl: string; accounts: SendingAccounts }[];
  /** Receipt polling (viem's 4 s default would make every settle last seconds on a devnet). Default 250 ms. */
  pollingIntervalMs?: number;
  /** How long settle waits for the receipt before it answers `settlement_pending`. Default 60 s. */
  confirmationTimeoutMs?: number;
  /** Per RPC request. Default 15 s. */
  rpcTimeoutMs?: number;
  /**
   * Called with each settlement transaction once it is signed and before it is sent: a rejection stops it unsent.
   * The service claims the transaction here (settlementClaim.ts), so no proof can present it as a payment, however
   * soon after its inclusion it comes.
   */
  beforeSend?: (tx: SignedSettlement) => Promise<void>;
}

/** A settlement transaction, signed and not yet sent: what it spends and its hash. */
export interface SignedSettlement {
  chainId: number;
  hash: Hash;
  /** The token, and the authorization (signer, nonce) the transaction spends. */
  asset: Address;
  from: Address;
  nonce: Hex;
}

/** A payment the facilitator found valid and payable right now (signature, terms, window, balance, nonce). */
export interface X402Verified {
  payer: Address;
  authorization: AuthorizationIdentity;
}

/** A settled payment: the authorization was spent by `transaction`, which moved `amountRaw` of `asset` to payTo. */
export interface X402Settlement {
  payer: Address;
  transaction: Hash;
  network: Network;
  amountRaw: string;
  asset: Address;
  authorizationNonce: Hex;
}

/** The service's own x402 facilitator for the `exact` scheme (EIP-3009), in process: no facilitator service. */
export interface X402Facilitator {
  /** Checks a matched payment without moving anything (x402 verify, including a simulation of the transfer). */
  verify(payment: X402Payment, requirement: PaymentRequirements): Promise<Result<X402Verified, X402Refusal>>;
  /**
   * Submits the authorization and waits for its receipt. Claim the authorization (authorizationClaimName)
   * before calling this: settle re-verifies, but only the token's nonce stops a second settle of the same
   * signature, and a second request must not be served by the first one's payment.
   */
  settle(payment: X402Payment, requirement: PaymentRequirements): Promise<Result<X402Settlement, X402Refusal>>;
  /**
   * The transaction that spent an authorization (its AuthorizationUsed event), or undefined: for a claim whose
   * settle outcome was lost (a crash after broadcast, or a settle refused because the authorization is spent).
   * Looks back `lookbackBlocks` from the head.
   */
  findSettlement(id: AuthorizationIdentity, lookbackBlocks: bigint): Promise<Hash | undefined>;
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0]!;

/**
 * Builds the facilitator: @x402/core's x402Facilitator with @x402/evm's ExactEvmScheme registered for each
 * chain. x402 verifies with a read client of the chain; its settlement goes to the chain worker, which owns the
 * settler's nonces and sends for named purposes only. Counterfactual (ERC-6492) payers are refused: no
 * smart-wallet factory is allowed to be deployed by a settle.
 */
export function createX402Facilitator(options: X402FacilitatorOptions): X402Facilitator {
  const facilitator = new x402Facilitator();
  const readers = new Map<Network, PublicClient>();

  for (const { chainId, rpcUrl, accounts } of options.chains) {
    const chain = defineChain({
      id: chainId,
      name: `eip155:${chainId}`,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
    });
    const client = createPublicClient({
      chain,
      transport: http(rpcUrl, { timeout: options.rpcTimeoutMs ?? 15_000 }),
      pollingInterval: options.pollingIntervalMs ?? 250,
    });
    // x402 lists the signer's addresses only for /supported: asked of the worker now (a worker not up yet answers
    // with the first settlement instead), never needed to verify or settle.
    let settler: Address | undefined;
    accounts.sendingAccount('x402Settlement').then(
      (a) => (settler ??= a),
      () => undefined,
    );
    /**
     * x402's settle calls writeContract(transferWithAuthorization): the worker signs it, beforeSend is shown it,
     * then the worker sends the very bytes signed. A claim refused abandons it, and its nonce is freed at once.
     */
    const writeContract = async (args: { address: Address; functionName: string; args: readonly unknown[] }): Promise<Hash> => {
      const purpose = settlementPurpose(args);
      const signed = await accounts.signSend(purpose);
      if (!signed.ok) throw new Error(`x402 settlement not signed (${signed.error.code}): ${signed.error.message}`);
      const tx = signed.value;
      settler = tx.account;
      try {
        await options.beforeSend?.({ chainId, hash: tx.hash, asset: tx.token, from: tx.from, nonce: tx.authorizationNonce });
      } catch (e) {
        await accounts.abandon(tx.hash);
        throw e;
      }
      const sent = await accounts.send(tx.hash);
      if (!sent.ok) throw new Error(`x402 settlement ${tx.hash} not sent (${sent.error.code}): ${sent.error.message}`);
      return tx.hash;
    };
    const refused = async (): Promise<never> => {
      throw new Error('x402: the settler sends transferWithAuthorization only');
    };
    const signer = toFacilitatorEvmSigner(
      {
        ...(client as unknown as Omit<Parameters<typeof toFacilitatorEvmSigner>[0], 'address'>),
        writeContract,
        sendTransaction: refused,
        get address() {
          return settler ?? '0x0000000000000000000000000000000000000000';
        },
      },
      { confirmationTimeoutMs: options.confirmationTimeoutMs ?? 60_000 },
    );
    facilitator.register(evmNetwork(chainId), new ExactEvmScheme(signer));
    readers.set(evmNetwork(chainId), client as unknown as PublicClient);
  }

  /**
   * x402 explains a failed simulation with reads batched through Multicall3; where that contract is missing
   * (an anvil devnet) every cause comes back as `…_transaction_simulation_failed`. The two causes a client can
   * act on are read directly here.
   */
  async function explainSimulationFailure(payment: X402Payment, requirement: PaymentRequirements): Promise<X402Refusal | undefined> {
    const client = readers.get(requirement.network)!;
    const id = authorizationIdentity(payment, requirement);
    try {
      const [used, balance] = await Promise.all([
        readAuthorizationState(client, id),
        client.readContract({ address: id.asset, abi: erc20Abi, functionName: 'balanceOf', args: [id.from] }),
      ]);
      if (used) return refusal(X402_REASON.nonceAlreadyUsed, `authorization ${id.nonce} of ${id.from} was already used or canceled`);
      if (balance < BigInt(payment.authorization.value)) {
        return refusal(X402_REASON.insufficientBalance, `${id.from} holds ${balance} of ${id.asset}, less than ${payment.authorization.value}`);
      }
    } catch {
      // Unexplained: the facilitator's own reason stands.
    }
    return undefined;
  }

  const unknownNetwork = (requirement: PaymentRequirements): X402Refusal | undefined =>
    readers.has(requirement.network) ? undefined : refusal(X402_REASON.invalidNetwork, `no chain ${requirement.network} is configured for x402`);

  return {
    async findSettlement(id, lookbackBlocks) {
      const client = readers.get(evmNetwork(id.chainId));
      if (!client) return undefined;
      const head = await client.getBlockNumber();
      return findAuthorizationTransaction(client, id, head > lookbackBlocks ? head - lookbackBlocks : 0n);
    },

    async verify(payment, requirement) {
      const unknown = unknownNetwork(requirement);
      if (unknown) return err(unknown);
      let response: VerifyResponse;
      try {
        response = await facilitator.verify(payment.payload, requirement);
      } catch (e) {
        return err(refusal(X402_REASON.unexpectedVerifyError, messageOf(e)));
      }
      if (response.isValid) {
        return ok({ payer: getAddress(payment.authorization.from), authorization: authorizationIdentity(payment, requirement) });
      }
      const reason = response.invalidReason ?? X402_REASON.simulationFailed;
      if (reason === X402_REASON.simulationFailed) {
        const explained = await explainSimulationFailure(payment, requirement);
        if (explained) return err(explained);
      }
      return err(refusal(reason, response.invalidMessage ? messageOf(response.invalidMessage) : reason));
    },

    async settle(payment, requirement) {
      const unknown = unknownNetwork(requirement);
      if (unknown) return err(unknown);
      let response: SettleResponse;
      try {
        response = await facilitator.settle(payment.payload, requirement);
      } catch (e) {
        return err(refusal(X402_REASON.unexpectedSettleError, messageOf(e)));
      }
      const transaction = /^0x[0-9a-fA-F]{64}$/.test(response.transaction) ? (response.transaction as Hash) : undefined;
      if (!response.success || !transaction) {
        const reason = response.errorReason ?? X402_REASON.transactionFailed;
        return err(refusal(reason, response.errorMessage ? messageOf(response.errorMessage) : reason, transaction));
      }
      return ok({
        payer: getAddress(payment.authorization.from),
        transaction,
        network: requirement.network,
        amountRaw: payment.authorization.value,
        asset: getAddress(requirement.asset),
        authorizationNonce: payment.authorization.nonce,
      });
    },
  };
}

/**
 * The settlement purpose of x402's transferWithAuthorization call: (from, to, value, validAfter, validBefore,
 * nonce) and either (v, r, s) or the signature bytes. The worker checks it against the chain's rules.
 */
function settlementPurpose(call: { address: Address; functionName: string; args: readonly unknown[] }): SendPurpose {
  if (call.functionName !== 'transferWithAuthorization') throw new Error(`x402: the settler does not send ${call.functionName}`);
  const [from, to, value, validAfter, validBefore, nonce, ...rest] = call.args as [Address, Address, bigint, bigint, bigint, Hex, ...unknown[]];
  let signature: Hex;
  if (rest.length === 3) {
    const [v, r, s] = rest as [number | bigint, Hex, Hex];
    const recovery = Number(v) < 27 ? Number(v) + 27 : Number(v);
    signature = concat([r, s, numberToHex(recovery, { size: 1 })]);
  } else {
    signature = rest[0] as Hex;
  }
  return {
    kind: 'x402Settlement',
    token: getAddress(call.address),
    authorization: { from, to, value: value.toString(), validAfter: validAfter.toString(), validBefore: validBefore.toString(), nonce },
    signature,
  };
}
