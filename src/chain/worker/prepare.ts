import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
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
import { encodeFactoryData, signAsOwner, type UserOperation07 } from '../userOperation.ts';
import { GAS, type OperationGasLimits } from '../gas.ts';
import type { Sponsor, SponsorFields } from '../sponsor/index.ts';
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
  /** Signs or fetches the sponsorships (src/chain/sponsor): the built-in signer or an ERC-7677 service. */
  sponsor: Sponsor;
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
          const unsponsored = (g: Pick<OperationGasLimits, 'callGasLimit' | 'verificationGasLimit' | 'preVerificationGas'>, n: bigint, deploy: boolean) => ({
            sender: wallet.address,
            nonce: n,
            ...(deploy && { factory: config.simpleAccountFactory, factoryData: encodeFactoryData(wallet.owner.address, wallet.salt) }),
            callData: sim.callData,
            callGasLimit: g.callGasLimit,
            verificationGasLimit: g.verificationGasLimit,
            preVerificationGas: g.preVerificationGas,
            maxFeePerGas: feeSnapshot.maxFeePerGas,
            maxPriorityFeePerGas: feeSnapshot.maxPriorityFeePerGas,
          });
          // 1. The sponsor's stub: the paymaster, its gas limits and paymasterData of the final size, so the gas
          //    limits below are the ones the sponsorship will cover (ERC-7677 pm_getPaymasterStubData).
          const provisional = { callGasLimit: sim.callGasLimit, verificationGasLimit: deploying ? GAS.verificationWithDeployment : GAS.verification, preVerificationGas: 0n };
          const stub = await deps.sponsor.stub(unsponsored(provisional, nonce, deploying));
          let gas: OperationGasLimits = await estimates.gasLimits({ wallet, sim, deploying, nonce, fees: feeSnapshot, sponsor: stub });
          const withPaymaster = (g: OperationGasLimits, n: bigint, deploy: boolean, fields: SponsorFields): UserOperation07 & { paymaster: Address } => ({
            ...unsponsored(g, n, deploy),
            paymaster: fields.paymaster,
            paymasterVerificationGasLimit: fields.paymasterVerificationGasLimit,
            paymasterPostOpGasLimit: fields.paymasterPostOpGasLimit,
            paymasterData: fields.paymasterData,
            signature: '0x',
          });
          if (deps.bundlerPreVerificationGas) {
            // 2. The bundler prices a draft: the operation at the chain's nonce (it estimates only what could run
            //    now), the factory in it while the wallet has no code, so never priced below the real one, the
            //    sponsor's stub data and the owner's signature by a throwaway key. Neither signature validates: the
            //    draft can never run, no sponsorship is spent on it, and the real operation is shown to no one
            //    before it is durable.
            const draftDeploying = chainNonce === 0n && !(await wallets.resolve(ref)).deployed;
            const draft = withPaymaster(gas, chainNonce, draftDeploying, stub);
            draft.signature = (await signAsOwner(draft, { owner: DRAFT_SIGNER, entryPoint: config.entryPoint, chainId: config.chainId })).signature as Hex;
            const required = await deps.bundlerPreVerificationGas(draft, gas.preVerificationGas);
            // 2 %: the real nonce and signatures may cost a few calldata bytes more, and an L2's L1 fee moves.
            const pvg = required + required / 50n;
            if (pvg > gas.preVerificationGas) gas = { ...gas, preVerificationGas: pvg };
          }
          // 3. The final sponsorship covers the final gas fields (ERC-7677 pm_getPaymasterData), unless the stub
          //    was final already; then 4. the owner signs the whole operation.
          const sponsored = stub.isFinal
            ? stub
            : await deps.sponsor.final(withPaymaster(gas, nonce, deploying, stub), { validUntil, validAfter: 0 });
          const op = await signAsOwner(withPaymaster(gas, nonce, deploying, sponsored), { owner: wallet.owner, entryPoint: config.entryPoint, chainId: config.chainId });
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
