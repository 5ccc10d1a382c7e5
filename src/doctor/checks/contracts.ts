import { encodeFunctionData, isAddressEqual, parseAbi, zeroAddress } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import { simpleAccountFactoryAbi } from '../../chain/abi.ts';
import { result, type CheckContext, type CheckResult, type DoctorCheck } from '../types.ts';

const accountEntryPointAbi = parseAbi(['function entryPoint() view returns (address)']);

/** Whether `address` holds code (an EOA or an empty address holds none). */
export async function hasCode(ctx: CheckContext, address: `0x${string}`): Promise<boolean> {
  const code = await ctx.client.getCode({ address });
  return code !== undefined && code !== '0x';
}

/**
 * The EntryPoint is there and speaks v0.7: its `getUserOpHash` takes the packed operation (v0.6's takes the
 * unpacked one, a different selector, and reverts), so a v0.6 EntryPoint at the address fails here, not at the
 * first operation.
 */
export const entryPointCheck: DoctorCheck = {
  id: 'contracts.entryPoint',
  summary: 'the EntryPoint has code and answers as v0.7',
  async run(ctx) {
    const { entryPoint } = ctx.target.config;
    if (!(await hasCode(ctx, entryPoint))) {
      return [result(ctx, 'contracts.entryPoint', 'fail', `no code at the EntryPoint ${entryPoint}`, 'use the canonical EntryPoint v0.7 0x0000000071727De22E5E9d8BAf0edAc6f37da032 (deployed on every public testnet), or deploy it on this chain')];
    }
    const packed = { sender: zeroAddress, nonce: 0n, initCode: '0x', callData: '0x', accountGasLimits: `0x${'00'.repeat(32)}`, preVerificationGas: 0n, gasFees: `0x${'00'.repeat(32)}`, paymasterAndData: '0x', signature: '0x' } as const;
    try {
      await ctx.client.call({ to: entryPoint, data: encodeFunctionData({ abi: entryPoint07Abi, functionName: 'getUserOpHash', args: [packed] }) });
    } catch {
      return [result(ctx, 'contracts.entryPoint', 'fail', `${entryPoint} has code but does not answer getUserOpHash(PackedUserOperation): not an EntryPoint v0.7`, 'this service speaks EntryPoint v0.7 only: configure the v0.7 EntryPoint 0x0000000071727De22E5E9d8BAf0edAc6f37da032')];
    }
    return [result(ctx, 'contracts.entryPoint', 'ok', `EntryPoint v0.7 at ${entryPoint}`)];
  },
};

/** The factory is there and its accounts belong to the configured EntryPoint (a factory for another one makes wallets that cannot run). */
export const factoryCheck: DoctorCheck = {
  id: 'contracts.factory',
  summary: "the SimpleAccountFactory has code and its accounts' EntryPoint is the configured one",
  async run(ctx): Promise<CheckResult[]> {
    const { simpleAccountFactory: factory, entryPoint } = ctx.target.config;
    const fix = 'use the SimpleAccountFactory v0.7 deployed for this EntryPoint (0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985 on the public testnets); never change it for a chain that already has wallets';
    if (!(await hasCode(ctx, factory))) return [result(ctx, 'contracts.factory', 'fail', `no code at the SimpleAccountFactory ${factory}`, fix)];
    let implementationEntryPoint: `0x${string}`;
    try {
      const implementation = await ctx.client.readContract({ address: factory, abi: simpleAccountFactoryAbi, functionName: 'accountImplementation' });
      implementationEntryPoint = await ctx.client.readContract({ address: implementation, abi: accountEntryPointAbi, functionName: 'entryPoint' });
    } catch {
      return [result(ctx, 'contracts.factory', 'fail', `${factory} does not answer accountImplementation().entryPoint(): not a SimpleAccountFactory`, fix)];
    }
    if (!isAddressEqual(implementationEntryPoint, entryPoint)) {
      return [result(ctx, 'contracts.factory', 'fail', `the factory's accounts use EntryPoint ${implementationEntryPoint}, not the configured ${entryPoint}`, fix)];
    }
    return [result(ctx, 'contracts.factory', 'ok', `SimpleAccountFactory at ${factory}, for this EntryPoint`)];
  },
};
