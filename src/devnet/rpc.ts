import { Agent, request } from 'node:http';

/** A bare JSON-RPC client for one anvil node: what the devnet's housekeeping needs, without viem's per-call cost. */
export interface NodeRpc {
  call<T>(method: string, params?: unknown[]): Promise<T>;
  /** Closes the kept-alive socket, so that it never holds the process open. */
  close(): void;
}

export class NodeRpcError extends Error {
  override name = 'NodeRpcError';
}

/** A keep-alive HTTP JSON-RPC client for `rpcUrl` (anvil answers on plain HTTP on loopback). */
export function nodeRpc(rpcUrl: string, opts: { timeoutMs?: number } = {}): NodeRpc {
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });
  const timeoutMs = opts.timeoutMs ?? 60_000;
  let id = 0;
  return {
    call<T>(method: string, params: unknown[] = []): Promise<T> {
      const body = JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params });
      return new Promise<T>((resolve, reject) => {
        const req = request(
          rpcUrl,
          { method: 'POST', agent, timeout: timeoutMs, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('error', reject);
            res.on('end', () => {
              try {
                const reply = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { result?: T; error?: { code: number; message: string } };
                if (reply.error) reject(new NodeRpcError(`${method}: ${reply.error.message} (${reply.error.code})`));
                else resolve(reply.result as T);
              } catch (error) {
                reject(new NodeRpcError(`${method}: unreadable reply (HTTP ${res.statusCode}): ${String(error)}`));
              }
            });
          },
        );
        req.on('timeout', () => req.destroy(new NodeRpcError(`${method}: no reply in ${timeoutMs} ms`)));
        req.on('error', reject);
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}
