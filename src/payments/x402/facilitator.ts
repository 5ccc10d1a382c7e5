import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { concat, getAddress, numberToHex, type Address, type Hash, type Hex, type Log } from 'viem';
import type { ChainWorker, SendingAccounts, X402SettlementPurpose } from '../../chain/types.ts';
import { err, ok, type Result } from '../../lib/result.ts';
import { authorizationIdentity, type AuthorizationIdentity } from './claim.ts';
import type { X402Payment } from './payment.ts';
import { refusal, X402_REASON, type X402Refusal } from './reasons.ts';
import { evmNetwork } from './requirements.ts';

/**
 * What x402 asks of a chain, all of it through that chain's worker (in process, or over gRPC in a cluster): named
 * reads for verification, the receipt of a settlement, and the settler's sending account. No RPC URL.
 */
export type X402ChainWorker = Pick<
  ChainWorker,
  'getCode' | 'isValidSignature' | 'tokenBalance' | 'authorizationState' | 'findAuthorizationUse' | 'getTransactionReceipt'
> &
  SendingAccounts;

export interface X402FacilitatorOptions {
  /**
   * The chains payments may arrive on, each offered as `eip155:<chainId>`, with the chain worker verification reads
   * through and that owns the settler account and sends settlements (accountSender.ts).
   */
  chains: readonly { chainId: number; worker: X402ChainWorker }[];
  /** Receipt polling of a sent settlement. Default 250 ms. */
  pollingIntervalMs?: number;
  /** How long settle waits for the receipt before it answers `settlement_pending`. Default 60 s. */
  confirmationTimeoutMs?: number;
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
 * chain. Everything x402 asks of the chain goes to that chain's worker: its reads to the worker's named reads, its
 * settlement to the account sender, which owns the settler's nonces and sends for named purposes only. Counterfactual (ERC-6492) payers are refused: no
 * smart-wallet factory is allowed to be deployed by a settle.
 */
export function createX402Facilitator(options: X402FacilitatorOptions): X402Facilitator {
  const facilitator = new x402Facilitator();
  const workers = new Map<Network, X402ChainWorker>();
  const pollMs = options.pollingIntervalMs ?? 250;

  for (const { chainId, worker } of options.chains) {
    // x402 lists the signer's addresses only for /supported: asked of the worker now (a worker not up yet answers
    // with the first settlement instead), never needed to verify or settle.
    let settler: Address | undefined;
    worker.sendingAccount('x402Settlement').then(
      (a) => (settler ??= a),
      () => undefined,
    );
    /**
     * x402's settle calls writeContract(transferWithAuthorization): the worker signs it, beforeSend is shown it,
     * then the worker sends the very bytes signed. A claim refused abandons it, and its nonce is freed at once.
     */
    const writeContract = async (args: { address: Address; functionName: string; args: readonly unknown[] }): Promise<Hash> => {
      const purpose = settlementPurpose(args);
      const signed = await worker.signSend(purpose);
      if (!signed.ok) throw new Error(`x402 settlement not signed (${signed.error.code}): ${signed.error.message}`);
      const tx = signed.value;
      settler = tx.account;
      try {
        await options.beforeSend?.({ chainId, hash: tx.hash, asset: purpose.token, from: purpose.authorization.from, nonce: purpose.authorization.nonce });
      } catch (e) {
        await worker.abandon(tx.hash);
        throw e;
      }
      const sent = await worker.send(tx.hash);
      if (!sent.ok) throw new Error(`x402 settlement ${tx.hash} not sent (${sent.error.code}): ${sent.error.message}`);
      return tx.hash;
    };
    /** Each read x402's exact scheme makes, answered by the worker's named read for it; any other is refused. */
    const readContract = async (args: { address: Address; functionName: string; args?: readonly unknown[] }): Promise<unknown> => {
      const a = args.args ?? [];
      switch (args.functionName) {
        case 'transferWithAuthorization': {
          // The simulation of a settlement: the worker runs the very transaction it would sign, as a call.
          const simulated = await worker.simulateSend(settlementPurpose({ ...args, args: a }));
          if (!simulated.ok) throw new Error(simulated.error.message);
          return undefined;
        }
        case 'isValidSignature':
          // ERC-1271's answer as x402 reads it: the magic value, or anything else.
          return (await worker.isValidSignature(args.address, a[0] as Hex, a[1] as Hex)) ? '0x1626ba7e' : '0xffffffff';
        case 'balanceOf':
          return worker.tokenBalance(args.address, a[0] as Address);
        case 'authorizationState':
          return worker.authorizationState({ token: args.address, authorizer: a[0] as Address, nonce: a[1] as Hex });
        default:
          // Multicall3 batches among them: x402 then falls back to its generic reason, explained below.
          throw new Error(`x402: ${args.functionName} is not one of the chain worker's named reads`);
      }
    };
    /** Polls the worker for the settlement's receipt until the timeout x402 gives (confirmationTimeoutMs). */
    const waitForTransactionReceipt = async ({ hash, timeout }: { hash: Hash; timeout?: number }) => {
      const deadline = Date.now() + (timeout ?? options.confirmationTimeoutMs ?? 60_000);
      for (;;) {
        const receipt = await worker.getTransactionReceipt(hash).catch(() => undefined);
        if (receipt) {
          const logs = receipt.logs.map((l) => ({ ...l, transactionHash: receipt.transactionHash, blockNumber: receipt.blockNumber, blockHash: receipt.blockHash }));
          return { status: receipt.status, logs: logs as unknown as Log[] };
        }
        if (Date.now() + pollMs > deadline) throw new Error(`no receipt of ${hash} within ${timeout} ms`);
        await new Promise((r) => setTimeout(r, pollMs));
      }
    };
    const refused = async (): Promise<never> => {
      throw new Error('x402: the settler sends transferWithAuthorization only');
    };
    const signer = toFacilitatorEvmSigner(
      {
        readContract,
        writeContract,
        sendTransaction: refused,
        waitForTransactionReceipt,
        getCode: async ({ address }: { address: Address }) => worker.getCode(address),
        // Not called by the exact scheme (it verifies with getCode and isValidSignature above).
        verifyTypedData: refused,
        get address() {
          return settler ?? '0x0000000000000000000000000000000000000000';
        },
      },
      { confirmationTimeoutMs: options.confirmationTimeoutMs ?? 60_000 },
    );
    facilitator.register(evmNetwork(chainId), new ExactEvmScheme(signer));
    workers.set(evmNetwork(chainId), worker);
  }

  /**
   * x402 explains a failed simulation with reads batched through Multicall3; where that contract is missing
   * (an anvil devnet) every cause comes back as `…_transaction_simulation_failed`. The two causes a client can
   * act on are read directly here.
   */
  async function explainSimulationFailure(payment: X402Payment, requirement: PaymentRequirements): Promise<X402Refusal | undefined> {
    const worker = workers.get(requirement.network)!;
    const id = authorizationIdentity(payment, requirement);
    try {
      const [used, balance] = await Promise.all([
        worker.authorizationState({ token: id.asset, authorizer: id.from, nonce: id.nonce }),
        worker.tokenBalance(id.asset, id.from),
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
    workers.has(requirement.network) ? undefined : refusal(X402_REASON.invalidNetwork, `no chain ${requirement.network} is configured for x402`);

  return {
    async findSettlement(id, lookbackBlocks) {
      const worker = workers.get(evmNetwork(id.chainId));
      if (!worker) return undefined;
      return worker.findAuthorizationUse({ token: id.asset, authorizer: id.from, nonce: id.nonce }, lookbackBlocks);
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
function settlementPurpose(call: { address: Address; functionName: string; args: readonly unknown[] }): X402SettlementPurpose {
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
