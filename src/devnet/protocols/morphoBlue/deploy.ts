import { BaseError, concat, encodeFunctionData, parseUnits, type Address, type Hex } from 'viem';
import { devnetPublicClient, devnetWalletClient } from '../../clients.ts';
import { CREATE2_DEPLOYER, testStablecoinAbi } from '../../contracts.ts';
import type { ProtocolDeployContext, ProtocolDeployResult } from '../types.ts';
import { morphoAbi, morphoBlueContracts, oracleMockAbi } from './contracts.ts';
import { devnetMarkets, marketConfig, SEED_SUPPLY } from './markets.ts';
import { missingParts, readMorphoBlueState } from './state.ts';

/**
 * Brings Morpho Blue on one chain to the devnet's expected state, doing only what is missing (a reload does
 * nothing but one round of reads; a deployment cut short is finished): Morpho owned by the protocol deployer,
 * Morpho's IrmMock and OracleMock (WETH at 3000 USDC), the IRM and LLTVs enabled, the USDC/WETH markets created
 * and each seeded with SEED_SUPPLY USDC from the deployer. Every contract is a CREATE2 deployment (contracts.ts).
 */
export async function deployMorphoBlue(ctx: ProtocolDeployContext): Promise<ProtocolDeployResult<'morphoBlue'>> {
  try {
    return await deploy(ctx);
  } catch (error) {
    throw new Error(`${ctx.name}: morphoBlue: ${reasonOf(error)}`, { cause: error });
  }
}

/** viem's short message and the node's own words (e.g. the revert reason anvil gave). */
function reasonOf(error: unknown): string {
  if (!(error instanceof BaseError)) return (error as Error).message;
  return error.details && !error.shortMessage.includes(error.details) ? `${error.shortMessage} (${error.details})` : error.shortMessage;
}

async function deploy(ctx: ProtocolDeployContext): Promise<ProtocolDeployResult<'morphoBlue'>> {
  const started = performance.now();
  const client = devnetPublicClient(ctx.chain);
  const wallet = devnetWalletClient(ctx.chain, ctx.deployer.privateKey);
  const deployer = ctx.deployer.address;
  const contracts = morphoBlueContracts(deployer);
  const plan = devnetMarkets(ctx.tokens, contracts);
  const config = { morpho: contracts.morpho.address, markets: plan.markets.map((m) => marketConfig(m.params)) };

  const read = () => readMorphoBlueState(client, contracts, plan, deployer);
  const state = await read();
  // Morpho's address follows from its owner, so another owner here means someone called setOwner: not ours to undo.
  if (state.owner !== undefined && state.owner.toLowerCase() !== deployer.toLowerCase()) {
    throw new Error(`Morpho at ${contracts.morpho.address} is owned by ${state.owner}, not the protocol deployer ${deployer}`);
  }
  if (missingParts(state, contracts, plan).length === 0) return { deployed: [], config };

  const deployed: string[] = [];
  const send = async (label: string, tx: { to: Address; data: Hex }): Promise<void> => {
    try {
      // Headroom over the estimate: Morpho's gas depends on the block's second. A call estimated in the second
      // its market was last updated accrues no interest; mined in the next one it also calls the IRM and writes
      // more storage (≈ +14k for the first seed supply), and an exact estimate runs out of gas. An estimate that
      // reverts still says why, in Morpho's words.
      const gas = await client.estimateGas({ account: wallet.account, ...tx });
      // The ...Sync send returns the receipt (an idle automine anvil gives waitForTransactionReceipt no new block).
      await wallet.sendTransactionSync({ ...tx, gas: gas + gas / 2n, throwOnReceiptRevert: true });
    } catch (error) {
      throw new Error(`${label} failed: ${reasonOf(error)}`, { cause: error });
    }
    deployed.push(label);
  };
  const callMorpho = (label: string, data: Hex) => send(label, { to: contracts.morpho.address, data });

  if (!state.code.morpho || !state.code.irm || !state.code.oracle) {
    if (((await client.getCode({ address: CREATE2_DEPLOYER })) ?? '0x') === '0x') throw new Error(`no CREATE2 deployer at ${CREATE2_DEPLOYER}`);
  }
  for (const key of ['morpho', 'irm', 'oracle'] as const) {
    const c = contracts[key];
    if (!state.code[key]) await send(c.label, { to: CREATE2_DEPLOYER, data: concat([c.salt, c.initCode]) });
  }
  // Only an unset price is ours to set: a reloaded chain keeps whatever price someone gave the oracle since.
  if (state.oraclePrice === 0n) {
    await send(`OracleMock price ${plan.oraclePrice}`, {
      to: contracts.oracle.address,
      data: encodeFunctionData({ abi: oracleMockAbi, functionName: 'setPrice', args: [plan.oraclePrice] }),
    });
  }
  if (!state.irmEnabled) {
    await callMorpho('enableIrm(IrmMock)', encodeFunctionData({ abi: morphoAbi, functionName: 'enableIrm', args: [contracts.irm.address] }));
  }
  for (const [i, m] of plan.markets.entries()) {
    const s = state.markets[i]!;
    if (!s.lltvEnabled) {
      await callMorpho(`enableLltv(${m.params.lltv})`, encodeFunctionData({ abi: morphoAbi, functionName: 'enableLltv', args: [m.params.lltv] }));
    }
    if (!s.created) await callMorpho(`market ${m.label}`, encodeFunctionData({ abi: morphoAbi, functionName: 'createMarket', args: [m.params] }));
  }
  await seedMarkets();

  const missing = missingParts(await read(), contracts, plan);
  if (missing.length > 0) throw new Error(`still missing after deployment: ${missing.join('; ')}`);
  ctx.log(`${ctx.name}: morphoBlue: deployed ${deployed.join(', ')} in ${Math.round(performance.now() - started)} ms`);
  return { deployed, config };

  /** The deployer mints itself the loan token it lacks (a public mint) and supplies SEED_SUPPLY to each unseeded market. */
  async function seedMarkets(): Promise<void> {
    const unseeded = plan.markets.filter((_, i) => !state.markets[i]!.seeded);
    if (unseeded.length === 0) return;
    const perMarket = parseUnits(SEED_SUPPLY.toString(), plan.loan.decimals);
    const needed = perMarket * BigInt(unseeded.length);
    const token = plan.loan.address;
    const [balance, allowance] = await Promise.all([
      client.readContract({ address: token, abi: testStablecoinAbi, functionName: 'balanceOf', args: [deployer] }),
      client.readContract({ address: token, abi: testStablecoinAbi, functionName: 'allowance', args: [deployer, contracts.morpho.address] }),
    ]);
    if (balance < needed) {
      await send(`mint ${plan.loan.symbol}`, { to: token, data: encodeFunctionData({ abi: testStablecoinAbi, functionName: 'mint', args: [deployer, needed - balance] }) });
    }
    if (allowance < needed) {
      await send(`approve ${plan.loan.symbol}`, { to: token, data: encodeFunctionData({ abi: testStablecoinAbi, functionName: 'approve', args: [contracts.morpho.address, needed] }) });
    }
    for (const m of unseeded) {
      await callMorpho(
        `supply ${SEED_SUPPLY} ${plan.loan.symbol} to ${m.label}`,
        encodeFunctionData({ abi: morphoAbi, functionName: 'supply', args: [m.params, perMarket, 0n, deployer, '0x'] }),
      );
    }
  }
}
