import { result, shownUrl, type DoctorCheck } from '../types.ts';

/**
 * An outside ERC-4337 bundler (bundler.kind 'rpc') accepts operations for the configured EntryPoint. The
 * built-in bundler needs no check here: its executors are checked by `accounts`.
 */
export const bundlerCheck: DoctorCheck = {
  id: 'bundler',
  summary: "an outside bundler's eth_supportedEntryPoints includes the configured EntryPoint",
  async run(ctx) {
    const url = ctx.target.bundlerUrl;
    if (url === undefined) return [result(ctx, 'bundler.entryPoints', 'ok', 'built-in bundler')];
    const fix = `use a bundler URL that serves EntryPoint v0.7 on chain ${ctx.target.config.chainId} (a hosted bundler's URL for this chain)`;
    let answer: unknown;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_supportedEntryPoints', params: [] }),
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await response.json()) as { result?: unknown; error?: { message?: unknown } };
      if (body.error !== undefined) throw new Error(`error ${String(body.error.message ?? JSON.stringify(body.error))}`);
      answer = body.result;
    } catch (e) {
      return [result(ctx, 'bundler.entryPoints', 'fail', `the bundler at ${shownUrl(url)} does not answer eth_supportedEntryPoints (${(e as Error).message})`, fix)];
    }
    const entryPoints = Array.isArray(answer) ? answer.filter((a): a is string => typeof a === 'string') : [];
    if (!entryPoints.some((a) => a.toLowerCase() === ctx.target.config.entryPoint.toLowerCase())) {
      return [result(ctx, 'bundler.entryPoints', 'fail', `the bundler at ${shownUrl(url)} supports ${entryPoints.join(', ') || 'no EntryPoint'}, not ${ctx.target.config.entryPoint}`, fix)];
    }
    return [result(ctx, 'bundler.entryPoints', 'ok', `the bundler at ${shownUrl(url)} supports ${ctx.target.config.entryPoint}`)];
  },
};
