import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/env.ts';
import { apiClient, type TestApi } from '../support/http.ts';

/**
 * The faucet as a person meets it: `npm start` (agent-wallet dev) prints the faucet's URL next to the API's; an
 * agent's wallet address comes from GET /wallet; the page's form, filled and submitted in a real headless
 * browser (Debian's chromium, driven by playwright-core), sends aUSD, and the balance changes on the page and
 * on chain (read back through the service's GET /wallet/balance).
 */

const CHROMIUM = process.env.AGENT_WALLET_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

interface Dev {
  child: ChildProcess;
  apiUrl: string;
  faucetUrl: string;
  api: TestApi;
}

/** Starts `agent-wallet dev` on free ports; resolves once it printed both URLs and its key. */
async function startDev(): Promise<Dev> {
  const child = spawn(process.execPath, ['bin/agent-wallet.js', 'dev', '--port', '0', '--faucet-port', '0', '--data-dir', tempDir('aw-faucet-dev-'), '--quiet'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const out: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dev did not print its faucet curl line: ${out.join('\n')}`)), 90_000);
    child.once('exit', (code) => reject(new Error(`dev exited with ${code}: ${out.join('\n')}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      out.push(line);
      if (line.includes('/api/drip -H')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  const text = out.join('\n');
  const apiUrl = /agent-wallet is listening on (http:\/\/\S+)/.exec(text)![1]!;
  const faucetUrl = /aUSD faucet is listening on (http:\/\/\S+)/.exec(text)![1]!;
  const key = /development API key \(sponsored\): (\S+)/.exec(text)![1]!;
  return { child, apiUrl, faucetUrl, api: apiClient(apiUrl, key) };
}

describe('the faucet page in a headless browser (npm start)', () => {
  let dev: Dev;
  let browser: Browser;

  beforeAll(async () => {
    // CI runs scripts/test-deps.sh first, which installs it: missing here is a broken set-up, not a reason to skip.
    if (!existsSync(CHROMIUM)) {
      throw new Error(`no chromium at ${CHROMIUM}: run \`bash scripts/test-deps.sh\` (installs Debian's chromium) or set AGENT_WALLET_CHROMIUM`);
    }
    [dev, browser] = await Promise.all([startDev(), chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS })]);
  });
  afterAll(async () => {
    await browser?.close();
    if (dev && dev.child.exitCode === null) {
      const exited = new Promise((r) => dev.child.once('exit', r));
      dev.child.kill('SIGKILL');
      await exited;
    }
  });

  const aUSDRaw = async (agent: string, chain: string): Promise<string> => {
    const res = await dev.api.get(`/wallet/balance?agent_id=${agent}&chain=${chain}`);
    expect(res.status).toBe(200);
    return res.body.tokens.find((t: { symbol: string }) => t.symbol === 'aUSD').raw;
  };

  it('a person pastes the wallet address, picks a chain, submits: the page shows the transaction and the new balance', async () => {
    const wallet = await dev.api.get('/wallet?agent_id=browser-agent&chain=base');
    const address: string = wallet.body.smart_wallet_address;
    expect(await aUSDRaw('browser-agent', 'base')).toBe('0');

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text())); // a CSP violation lands here
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(dev.faucetUrl);
    expect(await page.title()).toBe('aUSD faucet · agent-wallet');

    // Found by their accessible names, as a screen reader would.
    await page.getByLabel('Smart wallet address').fill(` ${address} `);
    await page.getByLabel('Chain').selectOption('base');
    await page.getByRole('button', { name: 'Send 100 aUSD' }).click();
    const status = page.getByRole('status');
    await status.waitFor();
    expect(await status.getByRole('heading').textContent()).toBe('Sent 100 aUSD on base');
    expect(await page.locator('#result-address').textContent()).toBe(address);
    expect(await page.locator('#result-tx').textContent()).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await page.locator('#result-balance').textContent()).toBe('100 aUSD');
    expect(await aUSDRaw('browser-agent', 'base')).toBe('100000000');

    // The form keeps the address and the chain: one more click, and the balance moves again.
    expect(await page.getByLabel('Smart wallet address').inputValue()).toBe(address);
    await page.getByRole('button', { name: 'Send 100 aUSD' }).click();
    await page.waitForFunction(`document.querySelector('#result-balance')?.textContent === '200 aUSD'`); // (a string: no DOM types here)
    expect(await aUSDRaw('browser-agent', 'base')).toBe('200000000');
    expect(problems).toEqual([]);
  });

  it('a person sees what is wrong: a mistyped address, then the per-address limit', async () => {
    const address: string = (await dev.api.get('/wallet?agent_id=limited-agent&chain=arbitrum')).body.smart_wallet_address;
    const page = await browser.newPage();
    await page.goto(`${dev.faucetUrl}/?chain=arb`);
    expect(await page.getByLabel('Chain').inputValue()).toBe('arbitrum');

    // Hex of the right length passes the browser's own check; the checksum is the server's to refuse.
    const flipped = address.replace(/[a-f]/, (c) => c.toUpperCase());
    expect(flipped).not.toBe(address);
    await page.getByLabel('Smart wallet address').fill(flipped);
    await page.getByRole('button', { name: /^Send/ }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.getByRole('heading').textContent()).toBe('Check the form');
    expect(await page.locator('#result-message').textContent()).toMatch(/^address must be a 0x-prefixed 20-byte hex address/);
    expect(await page.locator('#result-code').textContent()).toBe('invalid_address');
    expect(await page.getByLabel('Smart wallet address').inputValue()).toBe(flipped);

    // npm start's limits: 3 drips per address and chain, then one an hour.
    for (let i = 1; i <= 3; i++) {
      await page.getByLabel('Smart wallet address').fill(address);
      await page.getByRole('button', { name: /^Send/ }).click();
      await page.getByRole('status').waitFor();
      expect(await page.locator('#result-balance').textContent()).toBe(`${i * 100} aUSD`);
    }
    await page.getByRole('button', { name: /^Send/ }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').getByRole('heading').textContent()).toBe('Too many drips for now');
    expect(await page.locator('#result-message').textContent()).toMatch(/retry after \d+ s\. Try again in (an hour|\d+ minutes)\.$/);
    expect(await aUSDRaw('limited-agent', 'arbitrum')).toBe('300000000');
  });

  it('npm start stops the faucet with the rest on SIGTERM', async () => {
    const exited = new Promise<number | null>((r) => dev.child.once('exit', r));
    dev.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(`${dev.faucetUrl}/api/info`)).rejects.toThrow();
  });
});
