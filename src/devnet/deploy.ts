import { concat, encodeFunctionData, parseEther, parseUnits, type Address, type Chain, type Hex } from 'viem';
import { entryPoint07Abi } from 'viem/account-abstraction';
import type { L1DataFeeConfig } from '../config/chainConfig.ts';
import type { DevnetAccounts } from './accounts.ts';
import { installL1FeeStandIn } from './l1DataFee.ts';
import { devnetPublicClient, devnetWalletClient } from './clients.ts';
import {
  CANONICAL,
  CREATE2_DEPLOYER,
  counterDeployment,
  entryPointDeployment,
  factoryDeployment,
  gateDeployment,
  paymasterAddress,
  paymasterDeployData,
  PAYMASTER_DEPLOYER_NONCE,
  simpleAccountFactoryAbi,
  testStablecoinAbi,
  tokenDeployments,
  verifyingPaymasterAbi,
  type Create2Deployment,
} from './contracts.ts';

/** The paymaster's EntryPoint deposit: enough for millions of sponsored operations on a devnet. */
export const PAYMASTER_DEPOSIT = parseEther('1000');
const PAYMASTER_STAKE = parseEther('1');
const PAYMASTER_UNSTAKE_DELAY_SEC = 86_400;

export interface DeployChainParameters {
  chain: Chain;
  accounts: DevnetAccounts;
  log: (line: string) => void;
  /** The L1 data fee this chain stands for: its oracle's stand-in is installed (l1DataFee.ts). */
  l1DataFee?: L1DataFeeConfig;
}

export interface DeployChainResult {
  /** What this call had to deploy: empty when the chain state already had everything. */
  deployed: string[];
}

/**
 * Brings one chain to the devnet's expected state, doing only what is missing: canonical EntryPoint and
 * SimpleAccountFactory, the VerifyingPaymaster with its deposit and stake, the test tokens with balances on
 * the funded accounts, Counter and Gate. Every address is fixed in advance (see contracts.ts), so a chain
 * whose state was lost gets the same addresses back.
 */
export async function deployChain({ chain, accounts, log, l1DataFee }: DeployChainParameters): Promise<DeployChainResult> {
  const client = devnetPublicClient(chain);
  const installer = devnetWalletClient(chain, accounts.installer.privateKey);
  const deployer = devnetWalletClient(chain, accounts.deployer.privateKey);
  const deployed: string[] = [];
  const hasCode = async (address: Address): Promise<boolean> => ((await client.getCode({ address })) ?? '0x') !== '0x';

  // The ...Sync send returns the receipt: an idle automine anvil gives waitForTransactionReceipt no new block.
  const viaCreate2 = async (d: Create2Deployment): Promise<void> => {
    if (await hasCode(d.address)) return;
    await installer.sendTransactionSync({ to: CREATE2_DEPLOYER, data: concat([d.salt, d.initCode]) });
    if (!(await hasCode(d.address))) throw new Error(`${chain.name}: ${d.label} has no code at ${d.address} after deployment`);
    deployed.push(d.label);
  };

  if (!(await hasCode(CREATE2_DEPLOYER))) throw new Error(`${chain.name}: no CREATE2 deployer at ${CREATE2_DEPLOYER}`);
  // EntryPoint first: the paymaster's constructor checks the EntryPoint's ERC-165 interface.
  await viaCreate2(entryPointDeployment);
  await viaCreate2(factoryDeployment);

  const paymaster = paymasterAddress(accounts.deployer.address);
  if (!(await hasCode(paymaster))) {
    const nonce = await client.getTransactionCount({ address: accounts.deployer.address });
    if (BigInt(nonce) !== PAYMASTER_DEPLOYER_NONCE) {
      throw new Error(`${chain.name}: the deployer's nonce is ${nonce}, so the paymaster cannot land at ${paymaster}; reset the devnet data dir`);
    }
    await deployer.sendTransactionSync({ data: paymasterDeployData(accounts.paymasterSigner.address) });
    if (!(await hasCode(paymaster))) throw new Error(`${chain.name}: VerifyingPaymaster has no code at ${paymaster}`);
    deployed.push('VerifyingPaymaster');
  }
  // Top up rather than "deposit once": a reloaded chain may have spent part of it.
  const info = await client.readContract({ address: entryPointDeployment.address, abi: entryPoint07Abi, functionName: 'getDepositInfo', args: [paymaster] });
  if (info.deposit < PAYMASTER_DEPOSIT / 2n) {
    await deployer.sendTransactionSync({
      to: paymaster,
      data: encodeFunctionData({ abi: verifyingPaymasterAbi, functionName: 'deposit' }),
      value: PAYMASTER_DEPOSIT - info.deposit,
    });
  }
  // Bundlers (and the EntryPoint's reputation rules) expect a staked paymaster.
  if (!info.staked) {
    await deployer.sendTransactionSync({
      to: paymaster,
      data: encodeFunctionData({ abi: verifyingPaymasterAbi, functionName: 'addStake', args: [PAYMASTER_UNSTAKE_DELAY_SEC] }),
      value: PAYMASTER_STAKE,
    });
  }

  for (const token of tokenDeployments) {
    await viaCreate2(token);
    const amount = parseUnits(token.funded.toString(), token.decimals);
    // The faucet holds tokens to send; the funded accounts, for tests and for trying the API by hand.
    for (const holder of [...accounts.funded, accounts.faucet]) {
      const balance = await client.readContract({ address: token.address, abi: testStablecoinAbi, functionName: 'balanceOf', args: [holder.address] });
      if (balance >= amount / 2n) continue;
      await installer.sendTransactionSync({
        to: token.address,
        data: encodeFunctionData({ abi: testStablecoinAbi, functionName: 'mint', args: [holder.address, amount - balance] }),
      });
    }
  }
  await viaCreate2(counterDeployment);
  await viaCreate2(gateDeployment);
  // Not counted in `deployed`: a chain state from before the stand-ins gains them without being "fresh".
  const standIn = l1DataFee && (await installL1FeeStandIn(chain, accounts, l1DataFee));
  if (standIn) log(`${chain.name}: installed the ${standIn}`);

  await verifyChain({ chain, accounts });
  if (deployed.length > 0) log(`${chain.name}: deployed ${deployed.join(', ')}`);
  return { deployed };
}

/** Checks what other modules rely on: code at every address and the paymaster wired to our signer. */
export async function verifyChain({ chain, accounts }: Omit<DeployChainParameters, 'log'>): Promise<void> {
  const client = devnetPublicClient(chain);
  const paymaster = paymasterAddress(accounts.deployer.address);
  const expected: [string, Address][] = [
    ['EntryPoint', entryPointDeployment.address],
    ['SenderCreator', CANONICAL.senderCreator],
    ['SimpleAccountFactory', factoryDeployment.address],
    ['account implementation', CANONICAL.accountImplementation],
    ['VerifyingPaymaster', paymaster],
    ...tokenDeployments.map((t): [string, Address] => [t.symbol, t.address]),
    ['Counter', counterDeployment.address],
    ['Gate', gateDeployment.address],
  ];
  const codes = await Promise.all(expected.map(([, address]) => client.getCode({ address })));
  const missing = expected.filter((_, i) => (codes[i] ?? '0x') === '0x').map(([label, address]) => `${label} (${address})`);
  if (missing.length > 0) throw new Error(`${chain.name}: no code for ${missing.join(', ')}`);

  const [implementation, signer, owner] = await Promise.all([
    client.readContract({ address: factoryDeployment.address, abi: simpleAccountFactoryAbi, functionName: 'accountImplementation' }),
    client.readContract({ address: paymaster, abi: verifyingPaymasterAbi, functionName: 'verifyingSigner' }),
    client.readContract({ address: paymaster, abi: verifyingPaymasterAbi, functionName: 'owner' }),
  ]);
  const same = (a: Hex, b: Hex): boolean => a.toLowerCase() === b.toLowerCase();
  if (!same(implementation, CANONICAL.accountImplementation)) throw new Error(`${chain.name}: factory implementation is ${implementation}`);
  if (!same(signer, accounts.paymasterSigner.address)) throw new Error(`${chain.name}: paymaster verifyingSigner is ${signer}`);
  if (!same(owner, accounts.deployer.address)) throw new Error(`${chain.name}: paymaster owner is ${owner}`);
}

/** Whether the chain already has every devnet contract (a reloaded state), without changing anything. */
export async function chainHasContracts(chain: Chain, accounts: DevnetAccounts): Promise<boolean> {
  try {
    await verifyChain({ chain, accounts });
    return true;
  } catch {
    return false;
  }
}
