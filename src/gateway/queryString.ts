/**
 * The gateway's query-string parser. Fastify's default (fast-querystring) leaves an escape it cannot decode
 * as it is, so `?agent_id=x%FFy` named the agent "x%FFy": a different wallet from the one the caller meant,
 * without a word. Here a value that is not percent-encoded UTF-8 becomes a string with a lone surrogate,
 * which the schemas refuse as not well-formed (400 naming the field). Repeated keys become arrays, as before,
 * and the schemas say the parameter was given twice.
 */
const NOT_UTF8 = '\uD800';

function decode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return `${part}${NOT_UTF8}`;
  }
}

export function parseQueryString(query: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const pair of query.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = decode(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : decode(pair.slice(eq + 1));
    const seen = out[key];
    out[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}
