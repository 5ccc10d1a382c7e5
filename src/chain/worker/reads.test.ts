import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeEventLog, decodeFunctionResult, encodeFunctionData, getAddress, parseEventLogs, type Address, type Hex } from 'viem';
import { testStablecoinAbi } from '../../devnet/contracts.ts';
import { isChainError, type ChainError } from '../errors.ts';
import { chainUnderTest, counterAbi, freshSecret, gateAbi } from '../../../test/support/chainUnderTest.ts';
import { MAX_LOG_RANGE_BLOCKS, type ReadCall } from '../types.ts';
import { createChainWorker, type LocalChainWorker } from './index.ts';
import { MAX_READ_CALLS } from './reads.ts';

/** Reads through the in-process worker; grpc.test.ts checks the same answers over the wire. */
describe('chain worker reads (devnet)', () => {
  const env = chainUnderTest();
  let worker: LocalChainWorker;

  beforeAll(async () => {
    worker = await createChainWorker(env.config, { serviceSecret: freshSecret() });
  });
  afterAll(() => worker?.close());

  const number: ReadCall = { to: env.counter, data: encodeFunctionData({ abi: counterAbi, functionName: 'number' }) };
  const fail: ReadCall = { to: env.counter, data: encodeFunctionData({ abi: counterAbi, functionName: 'fail' }) };
  const decodeNumber = (data: Hex) => decodeFunctionResult({ abi: counterAbi, functionName: 'number', data });
  const mined = async (hash: Hex) => env.client.waitForTransactionReceipt({ hash });
  const setNumber = async (n: bigint) => mined(await env.funded.writeContract({ address: env.counter, abi: counterAbi, functionName: 'setNumber', args: [n] }));
  const closeGate = async () => mined(await env.funded.writeContract({ address: env.gate, abi: gateAbi, functionName: 'setOpen', args: [false] }));

  it('gives the head: number, hash and timestamp of the latest block', async () => {
    const before = await env.client.getBlockNumber({ cacheTime: 0 });
    const head = await worker.getHead();
    expect(head.blockNumber).toBeGreaterThanOrEqual(before);
    const block = await env.client.getBlock({ blockNumber: head.blockNumber });
    expect(head).toEqual({ blockNumber: block.number, blockHash: block.hash, timestamp: block.timestamp });
  });

  it('answers every call of a batch on its own: a revert fails only its call', async () => {
    await setNumber(41n);
    await closeGate();
    const tokenCall: ReadCall = {
      to: env.config.tokens[0]!.address,
      data: encodeFunctionData({ abi: testStablecoinAbi, functionName: 'balanceOf', args: [env.funded.account.address] }),
    };
    const closedGate: ReadCall = { to: env.gate, data: encodeFunctionData({ abi: gateAbi, functionName: 'pass' }) };
    const r = await worker.read([number, fail, tokenCall, closedGate]);
    expect(r.blockNumber).toBe(await env.client.getBlockNumber({ cacheTime: 0 }));
    expect(r.results).toHaveLength(4);
    const [n, f, balance, gate] = r.results;
    if (!n?.success || balance?.success !== true) throw new Error(`expected successes: ${JSON.stringify(r.results)}`);
    expect(decodeNumber(n.returnData)).toBe(41n);
    expect(decodeFunctionResult({ abi: testStablecoinAbi, functionName: 'balanceOf', data: balance.returnData })).toBeGreaterThan(0n);
    expect(f).toMatchObject({ success: false, reason: 'Counter: forced failure' });
    expect(f?.success === false && f.revertData.startsWith('0x08c379a0')).toBe(true);
    expect(gate).toMatchObject({ success: false, reason: 'Gate: closed' });
  });

  it('reports a call that halts without revert data (invalid opcode) as that call failing', async () => {
    // Runtime code 0xfe: the INVALID opcode, a halt rather than a revert.
    const deployed = await mined(await env.funded.sendTransaction({ data: '0x60fe60005360016000f3' }));
    const halting = deployed.contractAddress as Address;
    const r = await worker.read([{ to: halting, data: '0x' }, number]);
    expect(r.results[0]).toMatchObject({ success: false, revertData: '0x' });
    expect(r.results[0]?.success === false && r.results[0].reason).toMatch(/invalid/i);
    expect(r.results[1]?.success).toBe(true);
  });

  it('reads at a pinned older block', async () => {
    await setNumber(7n);
    const pinned = await env.client.getBlockNumber({ cacheTime: 0 });
    await setNumber(8n);
    const then = await worker.read([number], { block: pinned });
    const now = await worker.read([number], { block: 'latest' });
    expect(then.blockNumber).toBe(pinned);
    expect(now.blockNumber).toBeGreaterThan(pinned);
    expect(then.results[0]?.success && decodeNumber(then.results[0].returnData)).toBe(7n);
    expect(now.results[0]?.success && decodeNumber(now.results[0].returnData)).toBe(8n);
  });

  it('refuses a block beyond the head and more calls than MAX_READ_CALLS, and takes exactly that many', async () => {
    const head = await env.client.getBlockNumber({ cacheTime: 0 });
    const beyond = await worker.read([number], { block: head + 1_000n }).catch((e: unknown) => e);
    expect(isChainError(beyond, 'invalid_request')).toBe(true);

    const tooMany = await worker.read(Array(MAX_READ_CALLS + 1).fill(number)).catch((e: unknown) => e);
    expect(isChainError(tooMany, 'invalid_request')).toBe(true);
    expect((tooMany as ChainError).details).toEqual({ maxCalls: MAX_READ_CALLS, calls: MAX_READ_CALLS + 1 });

    const full = await worker.read(Array(MAX_READ_CALLS).fill(number));
    expect(full.results).toHaveLength(MAX_READ_CALLS);
    expect(full.results.every((x) => x.success)).toBe(true);
    expect((await worker.read([])).results).toEqual([]);
  });

  it('gives a receipt with its logs (an ERC-20 Transfer) and its confirmations; undefined for an unknown hash', async () => {
    const token = env.config.tokens[0]!.address;
    const to = '0x00000000000000000000000000000000000a11ce' as Address;
    const hash = await env.funded.writeContract({ address: token, abi: testStablecoinAbi, functionName: 'transfer', args: [to, 1234n] });
    const mine = await mined(hash);

    const receipt = await worker.getTransactionReceipt(hash);
    expect(receipt).toMatchObject({
      transactionHash: hash,
      status: 'success',
      blockNumber: mine.blockNumber,
      blockHash: mine.blockHash,
      from: env.funded.account.address,
      to: token,
      confirmations: (await env.client.getBlockNumber({ cacheTime: 0 })) - mine.blockNumber + 1n,
    });
    const [transfer] = parseEventLogs({ abi: testStablecoinAbi, eventName: 'Transfer', logs: mine.logs });
    expect(receipt!.logs).toEqual([{ address: token, topics: transfer!.topics, data: transfer!.data, logIndex: transfer!.logIndex }]);
    const decoded = decodeEventLog({ abi: testStablecoinAbi, topics: receipt!.logs[0]!.topics as [Hex, ...Hex[]], data: receipt!.logs[0]!.data });
    expect(decoded).toMatchObject({ eventName: 'Transfer', args: { from: env.funded.account.address, to: getAddress(to), value: 1234n } });

    await setNumber(9n); // one block more
    expect((await worker.getTransactionReceipt(hash))!.confirmations).toBe(receipt!.confirmations + 1n);

    expect(await worker.getTransactionReceipt(`0x${'ee'.repeat(32)}`)).toBeUndefined();
  });

  it('gives the receipt of a reverted transaction with status reverted and no logs', async () => {
    await closeGate();
    const hash = await env.funded.writeContract({ address: env.gate, abi: gateAbi, functionName: 'pass', gas: 100_000n });
    await env.client.waitForTransactionReceipt({ hash });
    expect(await worker.getTransactionReceipt(hash)).toMatchObject({ status: 'reverted', logs: [], to: env.gate });
  });

  it('finds one contract\'s logs by topic over a bounded range, says how far it looked, and refuses a range beyond the bound or the head', async () => {
    const token = env.config.tokens[0]!.address;
    const from = await env.client.getBlockNumber({ cacheTime: 0 });
    const recipient = getAddress(`0x${freshSecret().slice(2, 42)}`);
    const receipt = await mined(await env.funded.writeContract({ address: token, abi: testStablecoinAbi, functionName: 'transfer', args: [recipient, 7n] }));
    const transferTopic = receipt.logs[0]!.topics[0]!;
    const toTopic = `0x${recipient.slice(2).toLowerCase().padStart(64, '0')}` as Hex;
    const found = await worker.getLogs({ address: token, topics: [transferTopic, null, [toTopic, `0x${'11'.repeat(32)}`]], fromBlock: from });
    expect(found.toBlock).toBeGreaterThanOrEqual(receipt.blockNumber);
    expect(found.logs).toEqual([
      {
        address: getAddress(token),
        topics: receipt.logs[0]!.topics,
        data: receipt.logs[0]!.data,
        logIndex: receipt.logs[0]!.logIndex,
        blockNumber: receipt.blockNumber,
        blockHash: receipt.blockHash,
        transactionHash: receipt.transactionHash,
      },
    ]);
    // Nothing mined since: an empty answer up to the same head.
    const after = await worker.getLogs({ address: token, topics: [transferTopic], fromBlock: found.toBlock + 1n });
    expect(after).toEqual({ logs: [], toBlock: found.toBlock });
    const beyond = await worker.getLogs({ address: token, topics: [], fromBlock: 0n, toBlock: found.toBlock + 5n }).catch((e: unknown) => e);
    expect(isChainError(beyond, 'invalid_request')).toBe(true);
    const tooWide = await worker.getLogs({ address: token, topics: [], fromBlock: 0n, toBlock: MAX_LOG_RANGE_BLOCKS }).catch((e: unknown) => e);
    expect(isChainError(tooWide, 'invalid_request')).toBe(true);
  });
});
