import { createServer, type Server } from 'node:net';

/**
 * Ports this test process has handed out. The OS may give a just-closed port to the next `listen(0)`, so a
 * port handed out earlier but not yet bound by its (child) process could be handed out again, and two roles of
 * one test cluster would race for it (seen in CI: a chain worker's gRPC port given again as another's ops port).
 */
const handedOut = new Set<number>();

function listenAnywhere(): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

/**
 * `n` distinct loopback ports that were free a moment ago and that this process has not handed out before.
 * Their listeners are held open together until all `n` are found, so the OS cannot give the same port twice;
 * another process may still take one before the caller binds it.
 */
export async function freePorts(n: number): Promise<number[]> {
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    while (ports.length < n) {
      const s = await listenAnywhere();
      held.push(s); // held either way: a port handed out before is not offered again by the OS while held
      const port = (s.address() as { port: number }).port;
      if (!handedOut.has(port)) ports.push(port);
    }
  } finally {
    await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  }
  for (const p of ports) handedOut.add(p);
  return ports;
}

export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}
