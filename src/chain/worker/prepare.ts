import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type LocalAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Call, SignedUserOperation } from '../../api/v1alpha1/index.ts';
import type { ChainConfig } from '../../config/chainConfig.ts';
import { isLockError, type LockManager } from '../../locks/types.ts';
import { toWalletCalls } from '../calls.ts';
import type { ChainClient } from '../client.ts';
import { readEntryPointNonce } from '../entryPointNonce.ts';
import { ChainError, rethrowAsRpcUnavailable } from '../errors.ts';
import type { FeeSnapshot } from '../fees.ts';
import type { Logger } from '../../lib/logger.ts';
import type { NonceAllocator } from '../nonceAllocator.ts';
import type { PrepareOptions, WalletRef } from '../types.ts';
import { buildSignedOperation, fromSignedUserOperation, type UserOperation07 } from '../userOperation.ts';
import type { OperationGasLimits } from '../gas.ts';
import type { WalletResolver } from '../wallet.ts';
import type { OperationEstimates } from './estimates.ts';
import { PreparedOperations } from './preparedCache.ts';

/** Signs the drafts an outside bundler prices: a key no wallet has, so a draft fails validation wherever it is sent. */
const DRAFT_SIGNER = privateKeyToAccount(generatePrivateKey());

/** Renewed while held (see LockManager); bounds how long a crashed worker blocks a wallet's next nonce. */
const NONCE_LOCK_TTL_MS = 10_000;

export interface OperationPreparerDeps {
  config: ChainConfig;
  client: ChainClient;
  locks: LockManager;
  wallets: WalletResolver;
  fees: () => Promise<FeeSnapshot>;
  nonces: NonceAllocator;
  estimates: OperationEstimates;
  prepared: PreparedOperations;
  paymasterSigner: PrivateKeyAccount;
  /**
   * An outside bundler's preVerificationGas for an operation like this one (rpc/gasAdvice.ts): it prices its own
   * calldata and overhead, and refuses an operation that pays less. Absent with the built-in bundler.
   */
  bundlerPreVerificationGas?: (draft: UserOperation07, ours: bigint) => Promise<bigint>;
  log: Logger;
}

export type PrepareOperation = (ref: WalletRef, calls: readonly Call[], opts: PrepareOptions) => Promise<SignedUserOperation>;

/**
 * `prepareOperation`: the calls' estimate (reused from a simulation moments ago), then, under the wallet's
 * nonce lock, the next nonce not held by an operation in flight, the paymaster's sponsorship and the owner's
 * signature. Nothing is sent. A repeated prepare of the same request gets the same operation (PreparedOperations).
 */
export function createOperationPreparer(deps: OperationPreparerDeps): PrepareOperation {
  const { config, client, locks, wallets, nonces, estimates, prepared, log } = deps;

  // No lock service, no nonce: to the caller this worker cannot serve now, as when its chain does not
  // answer (nothing was signed; admission retries, then fails with chain_unavailable).
  const lockUnavailable = (e: unknown): never => {
    if (isLockError(e, 'Unavailable')) throw new ChainError('rpc_unavailable', `${config.name}: ${e.message}`, { cause: e });
    throw e;
  };

  return async function prepareOperation(ref, calls, opts) {
    const preparedKey = PreparedOperations.keyOf(ref, calls, opts);
    const earlier = prepared.reusable(preparedKey, Math.floor(Date.now() / 1000));
    if (earlier) return earlier;
    const walletCalls = toWalletCalls(calls);
    const [wallet, feeSnapshot] = await Promise.all([wallets.resolve(ref), deps.fees()]).catch(rethrowAsRpcUnavailable);
    const r = await estimates.forSigning(wallet, walletCalls);
    if (!r.ok) {
      throw new ChainError(r.error.code, r.error.message, {
        details: { requestId: opts.requestId, revertReason: r.error.revertReason, revertData: r.error.revertData },
      });
    }
    const sim = r.value;
    // The EntryPoint compares validUntil with block.timestamp: count from the chain's clock when it runs ahead.
    const now = Math.max(Math.floor(Date.now() / 1000), Number(feeSnapshot.blockTimestamp));
    const expiry = now + config.bundler.sponsorshipTtlSeconds;

    return locks
      .withLock(`nonce:${config.name}:${wallet.address.toLowerCase()}`, NONCE_LOCK_TTL_MS, async () => {
        // Signed before for this request with other calls, never submitted: give its nonce back first, so the
        // new operation takes it rather than a second one (which would leave the first as a hole).
        const superseded = prepared.heldWithOtherCalls(ref, calls, opts);
        if (superseded) {
          nonces.release(wallet.address, BigInt(superseded.nonce), superseded.hash as Hex);
          prepared.forget(superseded.hash);
        }
        const chainNonce = await readEntryPointNonce(client, config.entryPoint, wallet.address).catch(rethrowAsRpcUnavailable);
        const { nonce, validUntil } = nonces.allocate(wallet.address, chainNonce, expiry);
        try {
          // The factory goes only into nonce 0 of a wallet without code (anyone may deploy it through the factory).
          const deploying = nonce === 0n && !(await wallets.resolve(ref)).deployed;
          const gas = await estimates.gasLimits({ wallet, sim, deploying, nonce, fees: feeSnapshot });
          const sign = (g: OperationGasLimits, n: bigint, deploy: boolean, owner: LocalAccount = wallet.owner) =>
            buildSignedOperation({
              chainId: config.chainId,
              entryPoint: config.entryPoint,
              sender: wallet.address,
              nonce: n,
              ...(deploy && { deployment: { factory: config.simpleAccountFactory, owner: wallet.owner.address, salt: wallet.salt } }),
              callData: sim.callData,
              gas: g,
              maxFeePerGas: feeSnapshot.maxFeePerGas,
              maxPriorityFeePerGas: feeSnapshot.maxPriorityFeePerGas,
              sponsorship: { paymaster: config.paymaster, signer: deps.paymasterSigner, window: { validUntil, validAfter: 0 } },
              owner,
            });
          let op = await sign(gas, nonce, deploying);
          if (deps.bundlerPreVerificationGas) {
            // The bundler prices a draft: the operation at the chain's nonce (it estimates only what could run now),
            // the factory in it while the wallet has no code, so never priced below the real one, and the owner's
            // signature by a throwaway key. The draft can never run (AA24), and the real operation is not shown to
            // anyone before it is durable.
            const draft = await sign(gas, chainNonce, chainNonce === 0n && !(await wallets.resolve(ref)).deployed, DRAFT_SIGNER);
            const required = await deps.bundlerPreVerificationGas(fromSignedUserOperation(draft), gas.preVerificationGas);
            // 2 %: the real nonce and signature may cost a few calldata bytes more, and an L2's L1 fee moves.
            const pvg = required + required / 50n;
            if (pvg > gas.preVerificationGas) op = await sign({ ...gas, preVerificationGas: pvg }, nonce, deploying);
          }
          nonces.reserve(wallet.address, nonce, op.hash as Hex, validUntil);
          prepared.remember(preparedKey, op, validUntil);
          log.debug({ requestId: opts.requestId, sender: wallet.address, nonce: nonce.toString(), hash: op.hash }, 'operation signed');
          return op;
        } catch (e) {
          nonces.release(wallet.address, nonce);
          throw e;
        }
      })
      .catch(lockUnavailable);
  };
}
