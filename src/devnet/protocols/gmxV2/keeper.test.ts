/**
 * The devnet's GMX keeper across a devnet restart, on a devnet of its own: an order created while the keeper waits
 * (a long delay) is executed by the next start's keeper (it reads ORDER_LIST again), once; the account's own
 * cancelOrder is refused before REQUEST_EXPIRATION_TIME and refunds after it. The keeper delay's validation.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { BaseError, ContractFunctionRevertedError, decodeEventLog, encodeFunctionData, isAddressEqual, maxUint256, parseUnits, zeroAddress, zeroHash, type Address, type Hex } from 'viem';
import { devnetClients, tempDir } from '../../../../test/support/env.ts';
import { newPayer } from '../../../../test/support/payer.ts';
import { startDevnet, type Devnet } from '../../devnet.ts';
import { testStablecoinAbi } from '../../contracts.ts';
import { customErrorsAbi, dataStoreAbi, eventEmitterAbi, exchangeRouterAbi } from '../../../protocols/gmxV2/abis.generated.ts';
import { dsKeys } from './keys.ts';
import { gmxKeeperDelayMs } from './run.ts';

const CHAIN = 'arbitrum';
const dataDir = tempDir('aw-gmx-keeper-');
let devnet: Devnet | undefined;
const lines: string[] = [];
const start = async (gmxKeeperDelayMs: number) => {
  devnet = await startDevnet({ dataDir, log: (l) => lines.push(l), protocols: { gmxKeeperDelayMs } });
  return devnetClients(devnet.manifest, devnet.manifestPath);
};

afterAll(async () => {
  await devnet?.stop();
});

async function revertName(call: Promise<unknown>): Promise<string | undefined> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof BaseError)) throw new Error(`expected a revert, got ${String(error)}`);
  return (error.walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null)?.data?.errorName;
}

describe('the devnet GMX keeper', () => {
  test('the delay: option, else environment, else 1000 ms; a bad value is refused with what is expected', () => {
    expect(gmxKeeperDelayMs(250, {})).toBe(250);
    expect(gmxKeeperDelayMs(undefined, { AGENT_WALLET_GMX_KEEPER_DELAY_MS: '40' })).toBe(40);
    expect(gmxKeeperDelayMs(undefined, {})).toBe(1000);
    expect(() => gmxKeeperDelayMs(undefined, { AGENT_WALLET_GMX_KEEPER_DELAY_MS: 'soon' })).toThrow(/whole number of milliseconds.*soon/);
    expect(() => gmxKeeperDelayMs(-1, {})).toThrow(/from 0 to 3600000/);
  });

  test('an order pending at a stop is executed once by the next start; cancelOrder waits for the expiration', { timeout: 60_000 }, async () => {
    let clients = await start(600_000);
    const config = clients.chain(CHAIN).protocols!.gmxV2!;
    const client = clients.publicClient(CHAIN);
    const USDC = clients.chain(CHAIN).tokens.find((t) => t.symbol === 'USDC')!.address;
    const trader = await newPayer(clients, CHAIN);
    await trader.mint('USDC', trader.address, parseUnits('1000', 6));
    await trader.wallet.writeContractSync({ address: USDC, abi: testStablecoinAbi, functionName: 'approve', args: [config.router, maxUint256] });
    const fee = 10n ** 16n;
    const call = (functionName: string, args: unknown[]): Hex => encodeFunctionData({ abi: exchangeRouterAbi, functionName, args } as never);
    const create = async (): Promise<Hex> => {
      const params = {
        addresses: { receiver: trader.address, cancellationReceiver: zeroAddress, callbackContract: zeroAddress, uiFeeReceiver: zeroAddress, market: config.markets![0]!, initialCollateralToken: USDC, swapPath: [] as Address[] },
        numbers: { sizeDeltaUsd: parseUnits('2000', 30), initialCollateralDeltaAmount: 0n, triggerPrice: 0n, acceptablePrice: maxUint256, executionFee: fee, callbackGasLimit: 0n, minOutputAmount: 0n, validFromTime: 0n },
        orderType: 2,
        decreasePositionSwapType: 0,
        isLong: true,
        shouldUnwrapNativeToken: false,
        autoCancel: false,
        referralCode: zeroHash,
        dataList: [] as Hex[],
      };
      const receipt = await trader.wallet.writeContractSync({
        address: config.exchangeRouter,
        abi: exchangeRouterAbi,
        functionName: 'multicall',
        args: [[call('sendWnt', [config.orderVault, fee]), call('sendTokens', [USDC, config.orderVault, parseUnits('200', 6)]), call('createOrder', [params])]],
        value: fee,
        gas: 3_000_000n,
      });
      return receipt.logs.find((l) => isAddressEqual(l.address, config.eventEmitter))!.topics[2]!;
    };
    const pending = () => client.readContract({ address: config.dataStore, abi: dataStoreAbi, functionName: 'getBytes32ValuesAt', args: [dsKeys.orderList, 0n, 10n] });
    const kept = await create();
    const cancelled = await create();
    expect(await pending()).toEqual([kept, cancelled]);

    const cancel = (key: Hex) => client.simulateContract({ account: trader.address, address: config.exchangeRouter, abi: [...exchangeRouterAbi, ...customErrorsAbi], functionName: 'cancelOrder', args: [key] });
    expect(await revertName(cancel(cancelled))).toBe('RequestNotYetCancellable');
    await client.request({ method: 'evm_increaseTime', params: [301] } as never);
    const balance = () => client.readContract({ address: USDC, abi: testStablecoinAbi, functionName: 'balanceOf', args: [trader.address] });
    const before = await balance();
    const receipt = await trader.wallet.writeContractSync({ address: config.exchangeRouter, abi: exchangeRouterAbi, functionName: 'cancelOrder', args: [cancelled], gas: 2_000_000n });
    expect(receipt.status).toBe('success');
    expect(await balance()).toBe(before + parseUnits('200', 6));
    const reasons = receipt.logs
      .filter((l) => isAddressEqual(l.address, config.eventEmitter))
      .map((l) => decodeEventLog({ abi: eventEmitterAbi, data: l.data, topics: l.topics }).args as { eventName: string; eventData: { stringItems: { items: readonly { key: string; value: string }[] } } })
      .filter((e) => e.eventName === 'OrderCancelled')
      .map((e) => e.eventData.stringItems.items.find((i) => i.key === 'reason')?.value);
    expect(reasons).toEqual(['USER_INITIATED_CANCEL']);
    expect(await pending()).toEqual([kept]);

    await devnet!.stop();
    clients = await start(0);
    const after = clients.publicClient(CHAIN);
    const deadline = Date.now() + 15_000;
    while ((await after.readContract({ address: config.dataStore, abi: dataStoreAbi, functionName: 'getBytes32Count', args: [dsKeys.orderList] })) > 0n) {
      if (Date.now() > deadline) throw new Error('the restarted keeper did not execute the pending order');
      await new Promise((r) => setTimeout(r, 100));
    }
    const executed = lines.filter((l) => l.includes(kept) && l.includes('executed'));
    expect(executed).toHaveLength(1);
    expect(lines.filter((l) => l.includes(cancelled) && l.startsWith('gmxV2 keeper: order'))).toEqual([]);
  });
});
