import { isAddressEqual, type Address, type Chain } from 'viem';
import { devnetPublicClient } from '../../clients.ts';
import { cometAbi } from '../../../protocols/compoundV3/abi.ts';
import type { CometDeployments } from './deployments.ts';

/**
 * Checks that a chain holds the market as planned: code at every address and the Comet wired to its base token
 * and feeds. (A CREATE2 address already commits to the whole init code; the reads catch a chain whose code was
 * replaced, e.g. with anvil_setCode.) Prices are not checked: a test or a user may have moved them on purpose.
 */
export async function verifyComet(p: { chain: Chain; plan: CometDeployments; baseToken: Address; collateral: Address[] }): Promise<void> {
  const client = devnetPublicClient(p.chain);
  const where = `${p.chain.name}: compoundV3`;
  const codes = await Promise.all(p.plan.all.map((d) => client.getCode({ address: d.address })));
  const missing = p.plan.all.filter((_, i) => (codes[i] ?? '0x') === '0x').map((d) => `${d.label} (${d.address})`);
  if (missing.length > 0) throw new Error(`${where}: no code for ${missing.join(', ')}`);

  const comet = p.plan.comet.address;
  const read = { address: comet, abi: cometAbi } as const;
  const [baseToken, baseFeed, numAssets, assets] = await Promise.all([
    client.readContract({ ...read, functionName: 'baseToken' }),
    client.readContract({ ...read, functionName: 'baseTokenPriceFeed' }),
    client.readContract({ ...read, functionName: 'numAssets' }),
    Promise.all(p.collateral.map((_, i) => client.readContract({ ...read, functionName: 'getAssetInfo', args: [i] }))),
  ]);
  const wrong: string[] = [];
  if (!isAddressEqual(baseToken, p.baseToken)) wrong.push(`baseToken ${baseToken}, expected ${p.baseToken}`);
  if (!isAddressEqual(baseFeed, p.plan.baseFeed.address)) wrong.push(`baseTokenPriceFeed ${baseFeed}, expected ${p.plan.baseFeed.address}`);
  if (numAssets !== p.collateral.length) wrong.push(`numAssets ${numAssets}, expected ${p.collateral.length}`);
  assets.forEach((info, i) => {
    const feed = p.plan.collateralFeeds[i]!.address;
    if (!isAddressEqual(info.asset, p.collateral[i]!) || !isAddressEqual(info.priceFeed, feed)) {
      wrong.push(`asset ${i} is ${info.asset} priced by ${info.priceFeed}, expected ${p.collateral[i]} priced by ${feed}`);
    }
  });
  if (wrong.length > 0) throw new Error(`${where}: the Comet at ${comet} is not the one planned: ${wrong.join('; ')}`);
}
