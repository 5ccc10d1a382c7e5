/** The docs test's reading of a page: its blocks, their markers, and what a shown output asks of a run. */
import { describe, expect, it } from 'vitest';
import { leaves, missingFromOutput, parseBlocks } from './blocks.ts';

const page = [
  '# A page',
  '```sh',
  'curl -s "$B/wallet"',
  '```',
  '<!-- docs-test: output -->',
  '```json',
  '{ "chain": "base", "deployed": false, "smart_wallet_address": "0x…", "n": 3, … }',
  '```',
  '<!-- docs-test: skip needs a real cluster -->',
  '<!-- other:begin -->',
  '```yaml',
  'a: 1',
  '```',
  '  ```bash',
  '  echo indented',
  '  ```',
  '```',
  'a diagram',
  '```',
].join('\n');

describe('docs blocks', () => {
  const blocks = parseBlocks('page.md', page);

  it('finds every fenced block with the marker on the lines before it', () => {
    expect(blocks.map((b) => [b.line, b.lang, b.marker.kind])).toEqual([
      [2, 'sh', 'run'],
      [6, 'json', 'output'],
      [11, 'yaml', 'skip'],
      [14, 'bash', 'run'],
      [17, '', 'run'], // unmarked and not runnable: the docs test fails it
    ]);
    expect(blocks[3]!.body).toBe('echo indented');
    expect(blocks[2]!.marker).toEqual({ kind: 'skip', reason: 'needs a real cluster' });
  });

  it('reads the save and npm-start markers', () => {
    expect(parseBlocks('p.md', '<!-- docs-test: save receiver.mjs -->\n```js\n1\n```')[0]!.marker).toEqual({ kind: 'save', file: 'receiver.mjs' });
    expect(parseBlocks('p.md', '<!-- docs-test: npm-start -->\n```sh\nnpm start\n```')[0]!.marker).toEqual({ kind: 'npm-start' });
    expect(() => parseBlocks('p.md', '<!-- docs-test: save ../x.mjs -->\n```js\n1\n```')).toThrow(/file name/);
  });

  it('a skip without a reason, or an unknown marker, is an error', () => {
    expect(() => parseBlocks('p.md', '<!-- docs-test: skip -->\n```sh\nls\n```')).toThrow(/needs a reason/);
    expect(() => parseBlocks('p.md', '<!-- docs-test: maybe -->\n```sh\nls\n```')).toThrow(/unknown docs-test marker/);
  });

  it("checks a JSON output's key fields written in full, wherever they are in the run's JSON", () => {
    const shown = blocks[1]!;
    expect(missingFromOutput(shown, JSON.stringify({ wallet: { chain: 'base', deployed: false, n: 3, smart_wallet_address: '0xabc' } }))).toEqual([]);
    expect(missingFromOutput(shown, JSON.stringify({ chain: 'base', deployed: true, n: 3 }))).toEqual(['deployed=false']);
    expect(missingFromOutput(shown, 'not json')).toEqual(['(no JSON in the output)', 'chain="base"', 'deployed=false', 'n=3']);
  });

  it("checks a text output's pieces between the …s, whatever the column padding", () => {
    const shown = parseBlocks('p.md', '```\nsent     10 WETH to 0x… on base\n```')[0]!;
    expect(missingFromOutput(shown, 'sent  10 WETH to 0xabc on base\n')).toEqual([]);
    expect(missingFromOutput(shown, 'sent 1 WETH to 0xabc on base\n')).toEqual(['sent 10 WETH to 0x']);
  });

  it('names every leaf by each suffix of its path, for placeholders like <required_amount_raw.aUSD>', () => {
    const m = leaves({ request_id: 'req-1', required_amount_raw: { aUSD: '7' }, calls: [{ value: '0' }] });
    expect(Object.fromEntries(m)).toEqual({
      request_id: 'req-1',
      'required_amount_raw.aUSD': '7',
      aUSD: '7',
      'calls.value': '0',
      value: '0',
    });
  });
});
