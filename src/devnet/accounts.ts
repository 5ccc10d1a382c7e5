import { toHex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';

/** anvil's default test mnemonic: public knowledge, so these keys are for the devnet only. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';

/**
 * Which anvil mnemonic index plays which role. Fixed, so addresses are the same on every start:
 * - deployer: deploys and owns the VerifyingPaymaster (a plain CREATE at its nonce 0, hence a fixed address),
 *   funds its EntryPoint deposit and stake.
 * - paymasterSigner: the paymaster's `verifyingSigner`; signs sponsorships.
 * - installer: sends the CREATE2 deployments (EntryPoint, factory, tokens, Counter, Gate) and the token mints;
 *   kept apart from the deployer so that the deployer's nonce 0 is always the paymaster.
 * - executors: EOAs that send handleOps bundles; the first is also the bundles' beneficiary.
 * - treasury: receives payments.
 * - funded: native coin and every test token, for tests and for trying the API by hand.
 * - protocolDeployer: deploys and owns the DeFi protocols the devnet runs (src/devnet/protocols).
 * - settler: sends the service's x402 settlements (transferWithAuthorization), so no other role's nonce moves.
 * - faucet: sends the aUSD faucet's drips.
 * - gmxKeeper: the devnet GMX v2's order keeper (executes pending orders; src/devnet/protocols/gmxV2).
 */
export const ACCOUNT_INDEX = {
  deployer: 0,
  paymasterSigner: 1,
  installer: 2,
  executors: [3, 4, 5, 6],
  treasury: 7,
  funded: [8, 9, 10, 11, 12],
  protocolDeployer: 13,
  settler: 14,
  faucet: 15,
  gmxKeeper: 16,
} as const;

/** How many mnemonic accounts anvil must fund for the roles above. */
export const ANVIL_ACCOUNT_COUNT = 17;

export interface DevnetAccount {
  address: `0x${string}`;
  privateKey: `0x${string}`;
}

export interface DevnetAccounts {
  deployer: DevnetAccount;
  paymasterSigner: DevnetAccount;
  installer: DevnetAccount;
  executors: DevnetAccount[];
  treasury: DevnetAccount;
  funded: DevnetAccount[];
  protocolDeployer: DevnetAccount;
  settler: DevnetAccount;
  faucet: DevnetAccount;
  gmxKeeper: DevnetAccount;
}

function accountAt(addressIndex: number): DevnetAccount {
  const hd = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex });
  const key = hd.getHdKey().privateKey;
  if (!key) throw new Error(`no private key for mnemonic index ${addressIndex}`);
  return { address: hd.address, privateKey: toHex(key) };
}

let cached: DevnetAccounts | undefined;

/** The devnet's role accounts (HD derivation is slow enough to be worth caching). */
export function devnetAccounts(): DevnetAccounts {
  cached ??= {
    deployer: accountAt(ACCOUNT_INDEX.deployer),
    paymasterSigner: accountAt(ACCOUNT_INDEX.paymasterSigner),
    installer: accountAt(ACCOUNT_INDEX.installer),
    executors: ACCOUNT_INDEX.executors.map(accountAt),
    treasury: accountAt(ACCOUNT_INDEX.treasury),
    funded: ACCOUNT_INDEX.funded.map(accountAt),
    protocolDeployer: accountAt(ACCOUNT_INDEX.protocolDeployer),
    settler: accountAt(ACCOUNT_INDEX.settler),
    faucet: accountAt(ACCOUNT_INDEX.faucet),
    gmxKeeper: accountAt(ACCOUNT_INDEX.gmxKeeper),
  };
  return cached;
}
