import { concat, encodeFunctionData, formatUnits, type Address, type Hex } from 'viem';
import { devnetPublicClient, devnetWalletClient } from '../../clients.ts';
import { CREATE2_DEPLOYER, testStablecoinAbi } from '../../contracts.ts';
import type { ProtocolDeployContext, ProtocolDeployResult } from '../types.ts';
import { cometAbi } from '../../../protocols/compoundV3/abi.ts';
import { cometDeployments, tokenOf } from './deployments.ts';
import { USDC_MARKET } from './market.ts';
import { verifyComet } from './verify.ts';

/** Gas limit of the seed supply, which takes ≈ 90,000 (measured: 88,195 on a fresh chain). */
const SUPPLY_GAS = 300_000n;

/**
 * Brings a chain to the devnet's Compound v3 market, doing only what is missing: the price feeds, the Comet
 * (all through the CREATE2 deployer, so the addresses are the same on every fresh chain), then the deployer's
 * seed supply. A reload finds everything and sends nothing; a partly deployed chain is finished.
 */
export async function deployCompoundV3(ctx: ProtocolDeployContext): Promise<ProtocolDeployResult<'compoundV3'>> {
  const market = USDC_MARKET;
  const client = devnetPublicClient(ctx.chain);
  const wallet = devnetWalletClient(ctx.chain, ctx.deployer.privateKey);
  const plan = cometDeployments({ tokens: ctx.tokens, owner: ctx.deployer.address, market });
  const { address: baseToken, decimals: baseDecimals } = tokenOf(ctx.tokens, market.base.symbol);
  const collateral = market.collateral.map((c) => tokenOf(ctx.tokens, c.symbol).address);
  const where = `${ctx.name}: compoundV3`;
  const deployed: string[] = [];

  // The ...Sync send returns the receipt: an idle automine anvil gives waitForTransactionReceipt no new block.
  const send = async (what: string, to: Address, data: Hex, gas?: bigint): Promise<void> => {
    const receipt = await wallet.sendTransactionSync({ to, data, gas });
    if (receipt.status !== 'success') throw new Error(`${where}: ${what} reverted (tx ${receipt.transactionHash})`);
  };

  const codes = await Promise.all([CREATE2_DEPLOYER, ...plan.all.map((d) => d.address)].map((address) => client.getCode({ address })));
  const has = (i: number): boolean => (codes[i] ?? '0x') !== '0x';
  if (!has(0)) throw new Error(`${where}: no CREATE2 deployer at ${CREATE2_DEPLOYER}`);
  // In order: the Comet's constructor checks its feeds' decimals.
  for (const [i, d] of plan.all.entries()) {
    if (has(i + 1)) continue;
    await send(`deploying ${d.label}`, CREATE2_DEPLOYER, concat([d.salt, d.initCode]));
    if ((await client.getCode({ address: d.address })) === undefined) throw new Error(`${where}: ${d.label} has no code at ${d.address} after deployment`);
    deployed.push(d.label);
  }

  // Top the seed up rather than "supply once": a chain stopped between the mint and the supply gets its supply.
  // Exactly what is supplied is minted (never the deployer's own balance: other protocols may seed from it too).
  const comet = plan.comet.address;
  const supplied = await client.readContract({ address: comet, abi: cometAbi, functionName: 'balanceOf', args: [ctx.deployer.address] });
  if (supplied < market.seedSupply) {
    const amount = market.seedSupply - supplied;
    await send('minting the seed', baseToken, encodeFunctionData({ abi: testStablecoinAbi, functionName: 'mint', args: [ctx.deployer.address, amount] }));
    await send('approving the seed', baseToken, encodeFunctionData({ abi: testStablecoinAbi, functionName: 'approve', args: [comet, amount] }));
    // A fixed limit, not the estimate: anvil's estimate is exact, and a clock tick before the transaction is mined
    // makes the Comet accrue interest first, which costs more (seen: out of gas).
    await send('supplying the seed', comet, encodeFunctionData({ abi: cometAbi, functionName: 'supply', args: [baseToken, amount] }), SUPPLY_GAS);
    deployed.push(`seed supply of ${formatUnits(amount, baseDecimals)} ${market.base.symbol}`);
  }

  await verifyComet({ chain: ctx.chain, plan, baseToken, collateral });
  if (deployed.length > 0) ctx.log(`${ctx.name}: compoundV3 ${market.symbol} at ${comet}: ${deployed.join(', ')}`);
  return { deployed, config: { markets: [{ name: market.symbol, comet }] } };
}
