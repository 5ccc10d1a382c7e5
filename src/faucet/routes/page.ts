import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { DripBodySchema } from '../../api/http/faucet.ts';
import type { ErrorBody } from '../../api/http/index.ts';
import { canonicalChain } from '../../config/chains.ts';
import type { Faucet } from '../faucet.ts';
import { PAGE_CSP, renderPage, type PageInput } from '../page.ts';

const HTML = 'text/html; charset=utf-8';

/** A field of a form or query as the page shows it again: a string, or nothing. */
function field(source: unknown, name: string): string {
  const value = (source as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/**
 * The page: GET / shows the form (prefilled from `?address=…&chain=…`, so a link can carry an agent's wallet),
 * POST / takes it as an ordinary form post and answers the page with the outcome. The drip, its validation and
 * its errors are the JSON API's: a refusal arrives here as the API's error body and is shown on the page, with
 * the API's status code.
 */
export function pageRoutes(faucet: Faucet): FastifyPluginAsyncZod {
  return async (app) => {
    // Browsers post forms urlencoded; only this scope accepts it (the JSON API takes JSON only). Values are
    // trimmed: a pasted address often brings a space or a newline along.
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
      done(null, Object.fromEntries([...new URLSearchParams(body as string)].map(([k, v]) => [k, v.trim()])));
    });

    const render = (request: FastifyRequest, reply: FastifyReply, form: PageInput['form'], outcome?: PageInput['outcome']) => {
      reply.type(HTML);
      return renderPage({ info: faucet.info, origin: `${request.protocol}://${request.host}`, form, outcome });
    };
    const defaultChain = faucet.chain(faucet.info.default_chain) ? faucet.info.default_chain : (faucet.info.chains[0]?.chain ?? '');
    /** The chain the select shows: the one given (an alias too) if this faucet serves it, else the default. */
    const chainOf = (source: unknown) => {
      const chain = canonicalChain(field(source, 'chain'));
      return chain !== undefined && faucet.chain(chain) ? chain : defaultChain;
    };

    app.addHook('onSend', async (request, reply, payload) => {
      reply.header('content-security-policy', PAGE_CSP).header('x-content-type-options', 'nosniff').header('cache-control', 'no-store');
      if (!String(reply.getHeader('content-type') ?? '').startsWith('application/json')) return payload;
      let body: ErrorBody;
      try {
        body = JSON.parse(String(payload)) as ErrorBody;
      } catch {
        return payload;
      }
      if (body.error === 'unsupported_media_type') body.message = 'send the form as application/x-www-form-urlencoded';
      const form = { address: field(request.body, 'address'), chain: chainOf(request.body) };
      return render(request, reply, form, { ok: false, status: reply.statusCode, body });
    });

    app.get('/', { schema: { hide: true } }, async (request, reply) =>
      render(request, reply, { address: field(request.query, 'address'), chain: chainOf(request.query) }),
    );

    app.post('/', { schema: { hide: true, body: DripBodySchema } }, async (request, reply) => {
      const result = await faucet.drip(request.body, request.ip);
      const explorer = faucet.chain(result.chain)?.explorerUrl;
      const txUrl = explorer === undefined ? undefined : `${explorer}/tx/${result.tx_hash}`;
      return render(request, reply, { address: result.address, chain: result.chain }, { ok: true, result, txUrl });
    });
  };
}
