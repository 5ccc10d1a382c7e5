import { describe, expect, it } from 'vitest';
import { escapeHtml, groupDigits, humanDuration, humanPeriod, renderPage } from './page.ts';
import type { FaucetInfo } from '../api/http/faucet.ts';

const INFO: FaucetInfo = {
  token: 'aUSD',
  amount: '1000',
  faucet_address: '0xFABB0ac9d68B0B445fB7357272Ff202C5651694a',
  default_chain: 'ethereum',
  chains: [{ chain: 'base', network: 'Base Sepolia', chain_id: 84532, token_address: '0x29B17ce942a830A88bC34F09FDC8C45479644479', decimals: 6, amount_raw: '1000000000' }],
  limits: { per_address: { burst: 1, every_seconds: 86_400 }, per_client: { burst: 5, every_seconds: 90 } },
};

describe('faucet page rendering', () => {
  it('escapes the five characters that matter in content and in quoted attributes', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&amp;</a>`)).toBe('&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;');
  });

  it('says durations and amounts as a person reads them', () => {
    expect([1, 45, 60, 90, 360, 3_600, 7_200, 86_400].map(humanDuration)).toEqual([
      'a second', '45 seconds', 'a minute', '2 minutes', '6 minutes', 'an hour', '2 hours', 'a day',
    ]);
    expect([3_600, 360, 86_400].map(humanPeriod)).toEqual(['hour', '6 minutes', 'day']);
    expect(['0', '100', '1000', '1234567.5', '10000000'].map(groupDigits)).toEqual(['0', '100', '1,000', '1,234,567.5', '10,000,000']);
  });

  it('escapes everything it echoes: form values, the origin, error messages, a transaction link', () => {
    const evil = `"><script>alert(1)</script>`;
    const html = renderPage({
      info: INFO,
      origin: `http://${evil}`,
      form: { address: evil, chain: 'base' },
      outcome: { ok: false, status: 400, body: { error: evil, message: evil, tx_hash: evil, trace_id: evil } },
    });
    expect(html).not.toContain('<script');
    expect(html.match(/&lt;script&gt;/g)).toHaveLength(6);
    const ok = renderPage({
      info: INFO,
      origin: 'http://127.0.0.1:8090',
      form: { address: '', chain: 'base' },
      outcome: {
        ok: true,
        txUrl: `https://explorer.example/tx/0xab"><img src=x>`,
        result: { chain: 'base', address: '0x1', token: 'aUSD', amount: '1000', amount_raw: '1000000000', tx_hash: '0xab', block_number: '7', balance: '2000.5', balance_raw: '2000500000' },
      },
    });
    expect(ok).toContain('<a href="https://explorer.example/tx/0xab&quot;&gt;&lt;img src=x&gt;"><code>0xab</code></a>');
    expect(ok).toContain('<dd id="result-balance" data-raw="2000500000">2,000.5 aUSD</dd>');
    expect(ok).toContain('Sent 1,000 aUSD on base');
  });

  it('lets the browser check the address but not refuse a pasted one with spaces; states the limits', () => {
    const html = renderPage({ info: INFO, origin: 'http://127.0.0.1:8090', form: { address: '', chain: 'base' } });
    const pattern = new RegExp(`^(?:${/pattern="([^"]+)"/.exec(html)![1]!})$`, 'v'); // as the browser compiles it
    expect(pattern.test(' 0x29B17ce942a830A88bC34F09FDC8C45479644479\n')).toBe(true);
    expect(pattern.test('0x29B17ce942a830A88bC34F09FDC8C4547964447')).toBe(false);
    expect(html).toContain('Each address: 1 drip per chain, then one more every day.');
    expect(html).toContain('Each client address: 5 drips over all addresses and chains, then one more every 2 minutes.');
    expect(html).toContain('<button type="submit">Send 1,000 aUSD</button>');
  });
});
