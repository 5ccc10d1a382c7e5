import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import {
  BaseError,
  ContractFunctionRevertedError,
  createTestClient,
  http,
  parseAbi,
  parseEventLogs,
  parseUnits,
  toFunctionSignature,
  type Abi,
  type Hex,
  type AbiFunction,
  type TransactionReceipt,
} from 'viem';
import { newPayer } from '../../../../test/support/payer.ts';
import { testDevnet } from '../../../../test/support/env.ts';
import { CHAIN_IDS } from '../../../config/chains.ts';
import { MorphoBlueConfigSchema } from '../../../protocols/morphoBlue/config.ts';
import { ANVIL_ACCOUNT_COUNT, devnetAccounts } from '../../accounts.ts';
import { startAnvil } from '../../anvil.ts';
import { devnetChain, devnetPublicClient, devnetWalletClient } from '../../clients.ts';
import { testStablecoinAbi } from '../../contracts.ts';
import { deployChain } from '../../deploy.ts';
import type { ProtocolDeployContext } from '../types.ts';
import { morphoAbi, morphoBlueContracts, MORPHO_BLUE_ARTIFACT_ABIS, oracleMockAbi } from './contracts.ts';
import { marketId, oraclePrice, SEED_SUPPLY, type MarketParams } from './markets.ts';
import { morphoBlue } from './index.ts';

const repoRoot = resolve(import.meta.dirname, '../../../..');
const devnet = testDevnet();
const base = devnet.chain('base');
const client = devnet.publicClient('base');
const protocolDeployer = devnet.manifest.accounts.protocolDeployer!;
const config = MorphoBlueConfigSchema.parse(base.protocols?.morphoBlue);
const token = (symbol: string) => base.tokens.find((t) => t.symbol === symbol)!;
const usdc = token('USDC');
const weth = token('WETH');
const usd = (whole: number | string) => parseUnits(String(whole), usdc.decimals);
const eth = (whole: number | string) => parseUnits(String(whole), weth.decimals);

/** The 86 % market: the one every lending test below uses. */
const params: MarketParams = { ...config.markets[0]!, lltv: BigInt(config.markets[0]!.lltv) };
const id = marketId(params);
const PRICE_3000 = oraclePrice(3000n, usdc.decimals, weth.decimals);

/** Morpho's events, to read what a call did (shares are not predictable once a market accrues interest). */
const morphoEvents = parseAbi([
  'event Supply(bytes32 indexed id, address indexed caller, address indexed onBehalf, uint256 assets, uint256 shares)',
  'event Borrow(bytes32 indexed id, address caller, address indexed onBehalf, address indexed receiver, uint256 assets, uint256 shares)',
  'event Repay(bytes32 indexed id, address indexed caller, address indexed onBehalf, uint256 assets, uint256 shares)',
]);
const eventOf = <N extends 'Supply' | 'Borrow' | 'Repay'>(receipt: TransactionReceipt, eventName: N) => {
  const [log] = parseEventLogs({ abi: morphoEvents, logs: receipt.logs, eventName });
  if (!log) throw new Error(`no ${eventName} event in ${receipt.transactionHash}`);
  return log.args;
};

const readMarket = async () => {
  const [totalSupplyAssets, totalSupplyShares, totalBorrowAssets, totalBorrowShares, lastUpdate] = await client.readContract({
    address: config.morpho,
    abi: morphoAbi,
    functionName: 'market',
    args: [id],
  });
  return { totalSupplyAssets, totalSupplyShares, totalBorrowAssets, totalBorrowShares, lastUpdate };
};
const readPosition = async (user: `0x${string}`) => {
  const [supplyShares, borrowShares, collateral] = await client.readContract({ address: config.morpho, abi: morphoAbi, functionName: 'position', args: [id, user] });
  return { supplyShares, borrowShares, collateral };
};
/** OracleMock.setPrice is open to anyone: the test's own account moves it. */
const setPrice = (wallet: Awaited<ReturnType<typeof newPayer>>['wallet'], price: bigint) =>
  wallet.writeContractSync({ address: params.oracle, abi: oracleMockAbi, functionName: 'setPrice', args: [price], throwOnReceiptRevert: true });

/** Health as Morpho computes it (Morpho._isHealthy): collateral × price / 1e36 × lltv / 1e18 against borrowed assets rounded up. */
async function health(user: `0x${string}`) {
  const [position, market, price] = await Promise.all([
    readPosition(user),
    readMarket(),
    client.readContract({ address: params.oracle, abi: oracleMockAbi, functionName: 'price' }),
  ]);
  const VIRTUAL_SHARES = 10n ** 6n;
  const VIRTUAL_ASSETS = 1n;
  const mulDivUp = (x: bigint, y: bigint, d: bigint) => (x * y + (d - 1n)) / d;
  const borrowed = mulDivUp(position.borrowShares, market.totalBorrowAssets + VIRTUAL_ASSETS, market.totalBorrowShares + VIRTUAL_SHARES);
  const maxBorrow = (((position.collateral * price) / 10n ** 36n) * params.lltv) / 10n ** 18n;
  return { borrowed, maxBorrow, healthy: maxBorrow >= borrowed };
}

/**
 * Morpho writes get a fixed gas limit instead of viem's exact estimate: estimated in the second of the market's
 * last update no interest accrues, mined in the next one it does (an IRM call, more storage), and an exact
 * estimate then runs out of gas. (The deployment adds headroom for the same reason: see deploy.ts.)
 */
const MINED = { gas: 1_000_000n, throwOnReceiptRevert: true } as const;

const gas: Record<string, bigint> = {};
afterAll(() => {
  if (Object.keys(gas).length > 0) console.log(`Morpho Blue gas: ${Object.entries(gas).map(([op, g]) => `${op} ${g}`).join(', ')}`);
});

describe('Morpho Blue on the devnet base chain', () => {
  test('is deployed with its markets, owned by the protocol deployer, each market seeded', async () => {
    const contracts = morphoBlueContracts(protocolDeployer.address);
    expect(config.morpho).toBe(contracts.morpho.address);
    expect(config.markets.map((m) => m.lltv)).toEqual(['860000000000000000', '945000000000000000']);
    // Morpho's runtime code as compiled with its own settings (15,582 bytes; the Base Sepolia one adds a metadata hash).
    const code = await client.getCode({ address: config.morpho });
    expect((code!.length - 2) / 2).toBe(15_582);
    expect(await client.readContract({ address: config.morpho, abi: morphoAbi, functionName: 'owner' })).toBe(protocolDeployer.address);
    expect(await client.readContract({ address: params.oracle, abi: oracleMockAbi, functionName: 'price' })).toBe(3000n * 10n ** 24n);
    for (const m of config.markets) {
      expect(m).toMatchObject({ loanToken: usdc.address, collateralToken: weth.address, oracle: contracts.oracle.address, irm: contracts.irm.address });
      const marketParams = { ...m, lltv: BigInt(m.lltv) };
      const mid = marketId(marketParams);
      const [, , , , lastUpdate] = await client.readContract({ address: config.morpho, abi: morphoAbi, functionName: 'market', args: [mid] });
      expect(lastUpdate).toBeGreaterThan(0n);
      const stored = await client.readContract({ address: config.morpho, abi: morphoAbi, functionName: 'idToMarketParams', args: [mid] });
      expect(stored).toEqual([m.loanToken, m.collateralToken, m.oracle, m.irm, marketParams.lltv]);
      const [seedShares] = await client.readContract({ address: config.morpho, abi: morphoAbi, functionName: 'position', args: [mid, protocolDeployer.address] });
      // Morpho mints 1e6 virtual shares per asset unit at an empty market.
      expect(seedShares).toBe(usd(SEED_SUPPLY.toString()) * 10n ** 6n);
    }
  });

  test('the typed ABI says what the compiled contracts have', () => {
    const check = (typed: Abi, compiled: unknown[]) => {
      const fns = (compiled as Abi).filter((x): x is AbiFunction => x.type === 'function');
      for (const item of typed.filter((x): x is AbiFunction => x.type === 'function')) {
        const match = fns.find((f) => toFunctionSignature(f) === toFunctionSignature(item));
        expect(match, toFunctionSignature(item)).toBeDefined();
        expect(match!.outputs.map((o) => o.type)).toEqual(item.outputs.map((o) => o.type));
        expect(match!.stateMutability).toBe(item.stateMutability);
      }
    };
    check(morphoAbi, MORPHO_BLUE_ARTIFACT_ABIS.Morpho);
    check(oracleMockAbi, MORPHO_BLUE_ARTIFACT_ABIS.OracleMock);
  });

  test('supply, collateral, borrow, the lltv, an unhealthy position, repay and withdraw', async () => {
    const user = await newPayer(devnet, 'base');
    const me = user.address;
    const wallet = user.wallet;
    await user.mint('USDC', me, usd(20_000));
    await user.mint('WETH', me, eth(10));
    for (const t of [usdc, weth]) {
      await wallet.writeContractSync({ address: t.address, abi: testStablecoinAbi, functionName: 'approve', args: [config.morpho, 2n ** 256n - 1n], throwOnReceiptRevert: true });
    }
    const balanceOf = (t: typeof usdc) => client.readContract({ address: t.address, abi: testStablecoinAbi, functionName: 'balanceOf', args: [me] });
    onTestFinished(async () => {
      await setPrice(wallet, PRICE_3000); // the oracle is shared: leave it as the deployment set it
    });

    // Supply: the shares land in position(id, user).
    const before = await readMarket();
    const supplied = await wallet.writeContractSync({ address: config.morpho, abi: morphoAbi, functionName: 'supply', args: [params, usd(10_000), 0n, me, '0x'], ...MINED });
    gas.supply = supplied.gasUsed;
    const supply = eventOf(supplied, 'Supply');
    expect(supply.assets).toBe(usd(10_000));
    expect(supply.shares).toBeGreaterThan(0n);
    expect((await readPosition(me)).supplyShares).toBe(supply.shares);
    const afterSupply = await readMarket();
    expect(afterSupply.totalSupplyShares - before.totalSupplyShares).toBe(supply.shares);
    expect(afterSupply.totalSupplyAssets - before.totalSupplyAssets).toBeGreaterThanOrEqual(usd(10_000)); // plus any interest accrued

    // Collateral: 10 WETH, worth 30,000 USDC at the oracle: 25,800 USDC may be borrowed at 86 %.
    const collateralized = await wallet.writeContractSync({ address: config.morpho, abi: morphoAbi, functionName: 'supplyCollateral', args: [params, eth(10), me, '0x'], ...MINED });
    gas.supplyCollateral = collateralized.gasUsed;
    expect((await readPosition(me)).collateral).toBe(eth(10));

    // Borrow.
    const usdcBefore = await balanceOf(usdc);
    const borrowed = await wallet.writeContractSync({ address: config.morpho, abi: morphoAbi, functionName: 'borrow', args: [params, usd(5_000), 0n, me, me], ...MINED });
    gas.borrow = borrowed.gasUsed;
    const borrow = eventOf(borrowed, 'Borrow');
    expect(await balanceOf(usdc)).toBe(usdcBefore + usd(5_000));
    expect((await readPosition(me)).borrowShares).toBe(borrow.shares);
    const afterBorrow = await readMarket();
    expect(afterBorrow.totalBorrowShares - afterSupply.totalBorrowShares).toBe(borrow.shares);
    expect(afterBorrow.totalBorrowAssets - afterSupply.totalBorrowAssets).toBeGreaterThanOrEqual(usd(5_000));

    // The lltv is Morpho's: 1 USDC short of the limit passes, 1 USDC over it reverts with Morpho's own message.
    const limit = usd(25_800);
    const { borrowed: owed } = await health(me);
    await client.simulateContract({ account: me, address: config.morpho, abi: morphoAbi, functionName: 'borrow', args: [params, limit - owed - usd(1), 0n, me, me] });
    // viem estimates gas first, so the revert surfaces there and nothing is sent: a ContractFunctionExecutionError
    // whose cause is a ContractFunctionRevertedError with Morpho's require string as `reason`.
    const heightBefore = await client.getBlockNumber();
    const error: unknown = await wallet
      .writeContractSync({ address: config.morpho, abi: morphoAbi, functionName: 'borrow', args: [params, limit - owed + usd(1), 0n, me, me] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BaseError);
    const revert = (error as BaseError).walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
    expect(revert?.reason).toBe('insufficient collateral');
    expect(revert?.data).toMatchObject({ errorName: 'Error', args: ['insufficient collateral'] });
    expect((error as BaseError).name).toBe('ContractFunctionExecutionError');
    expect((error as BaseError).shortMessage).toBe('The contract function "borrow" reverted with the following reason:\ninsufficient collateral');
    expect(await client.getBlockNumber()).toBe(heightBefore);
    expect((await readPosition(me)).borrowShares).toBe(borrow.shares);

    // An oracle price drop: 10 WETH at 500 USDC allow 4,300 USDC at 86 %, less than the 5,000 owed.
    expect((await health(me)).healthy).toBe(true);
    await setPrice(wallet, oraclePrice(500n, usdc.decimals, weth.decimals));
    const unhealthy = await health(me);
    expect(unhealthy.maxBorrow).toBe(usd(4_300));
    expect(unhealthy.healthy).toBe(false);
    // Morpho agrees: not a wei of collateral may leave an unhealthy position.
    const stuck = await client
      .simulateContract({ account: me, address: config.morpho, abi: morphoAbi, functionName: 'withdrawCollateral', args: [params, 1n, me, me] })
      .catch((e: unknown) => e);
    expect(((stuck as BaseError).walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null)?.reason).toBe('insufficient collateral');
    await setPrice(wallet, PRICE_3000);
    expect((await health(me)).healthy).toBe(true);

    // Repay everything by shares (assets 0): the interest accrued since is paid too.
    const { borrowShares } = await readPosition(me);
    const repaid = await wallet.writeContractSync({ address: config.morpho, abi: morphoAbi, functionName: 'repay', args: [params, 0n, borrowShares, me, '0x'], ...MINED });
    gas.repay = repaid.gasUsed;
    const repay = eventOf(repaid, 'Repay');
    expect(repay.shares).toBe(borrowShares);
    expect(repay.assets).toBeGreaterThanOrEqual(usd(5_000));
    expect((await readPosition(me)).borrowShares).toBe(0n);

    const withdrawnCollateral = await wallet.writeContractSync({ address: config.morpho, abi: morphoAbi, functionName: 'withdrawCollateral', args: [params, eth(10), me, me], ...MINED });
    gas.withdrawCollateral = withdrawnCollateral.gasUsed;
    expect((await readPosition(me)).collateral).toBe(0n);
    expect(await balanceOf(weth)).toBe(eth(10));

    const usdcBeforeWithdraw = await balanceOf(usdc);
    const withdrawn = await wallet.writeContractSync({ address: config.morpho, abi: morphoAbi, functionName: 'withdraw', args: [params, 0n, supply.shares, me, me], ...MINED });
    gas.withdraw = withdrawn.gasUsed;
    expect((await readPosition(me)).supplyShares).toBe(0n);
    expect((await balanceOf(usdc)) - usdcBeforeWithdraw).toBeGreaterThanOrEqual(usd(10_000) - 1n); // rounded down, plus interest
    // Gas as measured is printed after the file; supply is about 108k.
    expect(gas.supply).toBeGreaterThan(50_000n);
    expect(gas.supply).toBeLessThan(150_000n);
  });

  test('deploying again on the same chain deploys nothing and returns the same config', async () => {
    const lines: string[] = [];
    const ctx: ProtocolDeployContext = {
      chain: devnetChain(base),
      name: 'base',
      deployer: protocolDeployer,
      funded: devnet.manifest.accounts.funded,
      tokens: base.tokens,
      log: (line) => lines.push(line),
    };
    const height = await client.getBlockNumber();
    const started = performance.now();
    const result = await morphoBlue.deploy(ctx);
    console.log(`Morpho Blue reload (verify only): ${Math.round(performance.now() - started)} ms`);
    expect(result.deployed).toEqual([]);
    expect(result.config).toEqual(base.protocols?.morphoBlue);
    expect(await client.getBlockNumber()).toBe(height);
    expect(lines).toEqual([]);
  });
});

describe('a fresh chain', () => {
  /**
   * A private anvil with the devnet's own contracts (so the shared chain is left alone). The protocol deployer's
   * nonce is moved first: the addresses must not depend on it. `crashAfter` cuts the RPC after that many sent
   * transactions, which are mined all the same: a deployment killed at that point.
   */
  async function privateChain() {
    const node = await startAnvil({ chainId: CHAIN_IDS.base, marker: `morpho-test-${randomBytes(4).toString('hex')}`, accounts: ANVIL_ACCOUNT_COUNT });
    onTestFinished(() => node.stop());
    const chain = devnetChain({ chainId: node.chainId, name: 'base', rpcUrl: node.rpcUrl });
    await deployChain({ chain, accounts: devnetAccounts(), log: () => {} });
    const deployerWallet = devnetWalletClient(chain, protocolDeployer.privateKey);
    for (let i = 0; i < 3; i++) await deployerWallet.sendTransactionSync({ to: protocolDeployer.address, value: 0n });
    const ctx = (rpcUrl: string): ProtocolDeployContext => ({
      chain: devnetChain({ chainId: node.chainId, name: 'base', rpcUrl }),
      name: 'base',
      deployer: protocolDeployer,
      funded: devnet.manifest.accounts.funded,
      tokens: base.tokens,
      log: () => {},
    });
    return { node, chain, ctx };
  }

  /**
   * A JSON-RPC proxy to `target` in front of the deployment. `crashAfter`: every call fails once that many
   * transactions went through (they are mined all the same). `lateSends`: gas is estimated at the latest block
   * and every block keeps its timestamp, except that the transactions with these (1-based) numbers are mined one
   * second later: what a loaded machine does when a second ticks between a gas estimate and its block.
   */
  async function proxy(target: string, opts: { crashAfter?: number; lateSends?: number[] }): Promise<{ url: string; server: Server }> {
    let sent = 0;
    const rpc = async (method: string, params: unknown[]) => {
      const r = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method, params }) });
      return ((await r.json()) as { result: unknown }).result;
    };
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        void (async () => {
          const call = JSON.parse(body) as { id: number; method: string; params: unknown[] };
          const reply = (json: string) => res.writeHead(200, { 'content-type': 'application/json' }).end(json);
          // -32000 is not retried by viem: the "process" is gone.
          if (opts.crashAfter !== undefined && sent >= opts.crashAfter) {
            return reply(JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32000, message: `injected crash after ${opts.crashAfter} transactions` } }));
          }
          if (opts.lateSends && call.method === 'eth_estimateGas') {
            call.params = [call.params[0], 'latest'];
          }
          if (call.method.startsWith('eth_sendRawTransaction')) {
            sent++;
            if (opts.lateSends) {
              const latest = (await rpc('eth_getBlockByNumber', ['latest', false])) as { timestamp: Hex };
              await rpc('evm_setNextBlockTimestamp', [Number(BigInt(latest.timestamp) + (opts.lateSends.includes(sent) ? 1n : 0n))]);
            }
          }
          const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call) });
          reply(await upstream.text());
        })();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onTestFinished(() => void server.close());
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('proxy has no port');
    return { url: `http://127.0.0.1:${address.port}`, server };
  }

  test('gets the same addresses, and a deployment cut after any transaction is finished by the next start', async () => {
    const { node, chain, ctx } = await privateChain();
    const testClient = createTestClient({ chain, mode: 'anvil', transport: http() });
    let snapshot = await testClient.snapshot();
    const restore = async () => {
      await testClient.revert({ id: snapshot });
      snapshot = await testClient.snapshot(); // a revert uses its snapshot up
    };

    const started = performance.now();
    const full = await morphoBlue.deploy(ctx(node.rpcUrl));
    console.log(`Morpho Blue fresh deployment: ${Math.round(performance.now() - started)} ms, ${full.deployed.length} transactions`);
    expect(full.config).toEqual(config);
    expect(full.deployed).toHaveLength(13);
    expect(full.deployed.slice(0, 3)).toEqual(['Morpho', 'IrmMock', 'OracleMock']);
    const reloadStarted = performance.now();
    expect((await morphoBlue.deploy(ctx(node.rpcUrl))).deployed).toEqual([]);
    console.log(`Morpho Blue reload on a private chain: ${Math.round(performance.now() - reloadStarted)} ms`);

    for (let cut = 1; cut < full.deployed.length; cut++) {
      await restore();
      const cutting = await proxy(node.rpcUrl, { crashAfter: cut });
      try {
        await expect(morphoBlue.deploy(ctx(cutting.url)), `cut after ${cut}`).rejects.toThrow(/^base: morphoBlue: .*injected crash after/s);
      } finally {
        cutting.server.close();
      }
      const rest = await morphoBlue.deploy(ctx(node.rpcUrl));
      expect(rest.config, `cut after ${cut}`).toEqual(config);
      expect(rest.deployed, `cut after ${cut}`).toEqual(full.deployed.slice(cut));
    }
    // The finished chain is what a whole deployment gives: the deployer's seed in each market, no more.
    const finished = devnetPublicClient(chain);
    for (const m of config.markets) {
      const [shares] = await finished.readContract({ address: config.morpho, abi: morphoAbi, functionName: 'position', args: [marketId({ ...m, lltv: BigInt(m.lltv) }), protocolDeployer.address] });
      expect(shares).toBe(usd(SEED_SUPPLY.toString()) * 10n ** 6n);
    }
  }, 60_000);

  test('deploys when a second ticks between a gas estimate and its block (interest then accrues)', async () => {
    const { node, ctx } = await privateChain();
    // The 12th transaction is the first seed supply: estimated in the second its market was created (no
    // interest to accrue), mined in the next (Morpho then calls the IRM and writes more storage).
    const late = await proxy(node.rpcUrl, { lateSends: [12] });
    const result = await morphoBlue.deploy(ctx(late.url));
    expect(result.deployed[11]).toBe('supply 1000000 USDC to USDC/WETH 86%');
    expect(result.config).toEqual(config);
  });
});

test('the committed artifacts are what scripts/build-morpho.ts compiles', async () => {
  const out = mkdtempSync(join(tmpdir(), 'morpho-artifacts-'));
  onTestFinished(() => rmSync(out, { recursive: true, force: true }));
  const output = await new Promise<string>((done, fail) => {
    const child = spawn(process.execPath, ['bin/run-ts.js', 'scripts/build-morpho.ts', '--out', out], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.stderr.on('data', (c: Buffer) => (text += c.toString()));
    child.once('error', fail);
    child.once('exit', (code) => (code === 0 ? done(text) : fail(new Error(`build-morpho exited ${code}: ${text}`))));
  });
  console.log(output.trim());
  const committedDir = join(import.meta.dirname, 'artifacts');
  const names = ['IrmMock.json', 'Morpho.json', 'OracleMock.json'];
  expect(readdirSync(out).sort()).toEqual(names);
  expect(readdirSync(committedDir).sort()).toEqual(names);
  for (const name of names) expect(readFileSync(join(out, name), 'utf8'), name).toBe(readFileSync(join(committedDir, name), 'utf8'));
}, 180_000);
