import { connect, createServer, type Socket } from 'node:net';

/**
 * A loopback TCP proxy whose open connections can be frozen: bytes stop flowing both ways and nothing is
 * closed, as with a half-open connection (a NAT or load balancer that dropped its state, a node gone
 * without a RST). TLS passes through untouched. New connections after freeze() flow normally.
 */
export interface FreezableProxy {
  readonly port: number;
  /** Freezes every connection open now; returns how many. */
  freeze(): number;
  /** Connections currently open (frozen or not). */
  readonly connections: number;
  close(): Promise<void>;
}

export async function startFreezableProxy(target: { host: string; port: number }): Promise<FreezableProxy> {
  const open = new Set<{ client: Socket; upstream: Socket }>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const pair = { client, upstream };
    open.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as { port: number }).port,
    get connections() {
      return open.size;
    },
    freeze() {
      for (const { client, upstream } of open) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      return open.size;
    },
    async close() {
      for (const { client, upstream } of open) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise((r) => server.close(r));
    },
  };
}
