import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GmxPricedToken, GmxTokenPrice } from './prices.ts';

/** One ticker as GMX's oracle keeper serves `/prices/tickers` (prices: decimal strings, USD × 10^(30 − decimals)). */
export interface GmxTicker {
  tokenAddress: string;
  tokenSymbol: string;
  minPrice: string;
  maxPrice: string;
  updatedAt: number;
  timestamp: number;
}

export interface GmxPriceServer {
  url: string;
  stop(): Promise<void>;
}

/**
 * The devnet's stand-in for GMX's oracle keeper API, for what integrators read: `GET /prices/tickers` (the feeds'
 * prices, read on each request, min = max: the devnet has no spread) and `GET /tokens`. Loopback only, on the
 * last run's port when free, else a free one. Anything else is a 404 with a JSON `error`.
 */
export async function startGmxPriceServer(p: {
  tokens: readonly GmxPricedToken[];
  read: (tokens: readonly GmxPricedToken[]) => Promise<GmxTokenPrice[]>;
  log: (line: string) => void;
  /** The port to try first (the last run's); a free one if it is taken or unset. */
  port?: number | undefined;
}): Promise<GmxPriceServer> {
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '');
    if (req.method !== 'GET') return json(res, 405, { error: 'method_not_allowed', message: 'GET only' });
    if (path === '/tokens') {
      return json(res, 200, { tokens: p.tokens.map((t) => ({ symbol: t.symbol, address: t.token, decimals: t.decimals, synthetic: false })) });
    }
    if (path === '/prices/tickers') {
      p.read(p.tokens).then(
        (prices) => {
          const now = Date.now();
          const tickers: GmxTicker[] = prices.map((t) => ({
            tokenAddress: t.token,
            tokenSymbol: t.symbol,
            minPrice: t.price.toString(),
            maxPrice: t.price.toString(),
            updatedAt: Number(t.updatedAt) * 1000,
            timestamp: Math.floor(now / 1000),
          }));
          json(res, 200, tickers);
        },
        (error: unknown) => {
          p.log(`gmxV2 price server: reading the feeds failed: ${(error as Error).message}`);
          json(res, 502, { error: 'feeds_unavailable', message: 'the devnet price feeds could not be read' });
        },
      );
      return;
    }
    json(res, 404, { error: 'not_found', message: `no route ${path || '/'}: the devnet serves /prices/tickers and /tokens` });
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      const failed = (error: Error) => reject(error);
      server.once('error', failed);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', failed);
        resolve();
      });
    });
  const wanted = p.port !== undefined && Number.isInteger(p.port) && p.port > 0 ? p.port : 0;
  try {
    await listen(wanted);
  } catch (error) {
    if (wanted === 0 || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    p.log(`gmxV2 price server: port ${wanted} is taken, using a free one`);
    await listen(0);
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
